// README "Tools (MCP)" table as test input, against the MCP surface as the SDK's real Client lists it (a
// node with a signer and --compat kuradb): every tool it names is listed and every listed tool is named
// (KuraDB's two in "KuraDB compatibility"), with exactly the arguments and answer fields the row gives, and
// an argument the row marks `?` is never required.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defined } from '../helpers/defined.ts';
import { codeSpans, docSection, tableRows } from '../helpers/readme.ts';
import { listedTools } from '../helpers/toolSurface.ts';

/** `text` without its parenthesized asides (value lists, bounds, defaults), nested ones included. */
function withoutAsides(text: string): string {
  let depth = 0;
  let out = '';
  for (const ch of text) {
    if (ch === '(') depth++;
    else if (ch === ')') depth = Math.max(0, depth - 1);
    else if (depth === 0) out += ch;
  }
  return out;
}

/** The top-level field names of a `{a, b: …, c?}` shape. */
function topLevelFields(shape: string): string[] {
  const inner = shape.trim().replace(/^\{/, '').replace(/\}$/, '');
  const fields: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of `${inner},`) {
    if ('[{'.includes(ch)) depth++;
    if (']}'.includes(ch)) depth--;
    if (ch === ',' && depth === 0) {
      fields.push(defined(/^\s*([a-z_]+)/.exec(current)?.[1], `a field in ${shape}`));
      current = '';
    } else current += ch;
  }
  return fields;
}

const ROWS = tableRows(docSection('tools.md', 'Tools (MCP)'), 'tool').map(([tool = '', args = '', answer = '']) => {
  const argSpans = codeSpans(withoutAsides(args));
  const [shape = '', ...more] = codeSpans(withoutAsides(answer));
  return {
    name: defined(codeSpans(tool)[0], tool),
    args: argSpans.map((span) => span.replace(/\?$/, '')),
    optional: argSpans.filter((span) => span.endsWith('?')).map((span) => span.replace(/\?$/, '')),
    // Later spans such as "by filter also `matched`, `skipped: [{reason, count}]`" name more fields.
    answer: [
      ...topLevelFields(shape),
      ...more.map((span) => /^([a-z_]+)(?::|$)/.exec(span)?.[1]).filter((f) => f !== undefined),
    ],
  };
});

test('README Tools (MCP): the table is the listed tools, with their arguments and answer fields', async () => {
  const tools = await listedTools();
  const kuradb = ['list_rag', 'search_rag'];
  for (const name of kuradb) assert.match(docSection('kuradb.md', 'KuraDB compatibility'), new RegExp(`\`${name}\``));
  assert.deepEqual(
    ROWS.map((row) => row.name).sort(),
    tools
      .map((tool) => tool.name)
      .filter((name) => !kuradb.includes(name))
      .sort(),
  );
  for (const row of ROWS) {
    const tool = defined(
      tools.find((t) => t.name === row.name),
      row.name,
    );
    const properties = Object.keys(tool.inputSchema.properties ?? {});
    assert.deepEqual([...row.args].sort(), properties.sort(), `${row.name}: arguments`);
    for (const name of row.optional)
      assert.ok(!(tool.inputSchema.required ?? []).includes(name), `${row.name}: ${name}? is required`);
    const answer = Object.keys((tool.outputSchema?.properties as object | undefined) ?? {});
    assert.deepEqual([...new Set(row.answer)].sort(), answer.sort(), `${row.name}: answer fields`);
  }
});
