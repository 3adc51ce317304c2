// The manual's shape: the README stays short and for users, every page it and docs/ link to exists (with the
// heading an anchor names), the README links every page of docs/, tables are well formed, and every shell
// command the manual shows names a program, an npm script or an `arkivector` command that exists.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { test } from 'node:test';
import { VERSION } from '../../src/packageInfo.ts';
import {
  docSection,
  doc,
  fencedBlocks,
  MANUAL_FILES,
  README,
  shellCommands,
  tableRows,
  codeSpans,
} from '../helpers/readme.ts';

/** The longest the README may be: a newcomer reads it in ten minutes, the rest lives in docs/. */
const README_MAX_LINES = 450;

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\- _]/gu, '')
    .replace(/ /g, '-');

/** The anchors of a Markdown file's headings (outside code fences), numbered as GitHub numbers repeats. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const m = !fenced && /^#{1,6} (.*)$/.exec(line);
    if (!m) continue;
    const base = slug(m[1] ?? '');
    const n = seen.get(base) ?? 0;
    seen.set(n === 0 ? base : `${base}-${n}`, 0);
    seen.set(base, n + 1);
  }
  return new Set(seen.keys());
}

/** The relative links of a Markdown text (outside code fences and code spans): [text](target). */
function links(text: string): string[] {
  const prose = text.replace(/^```[\s\S]*?^```$/gm, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] ?? '').filter((target) => !/^[a-z]+:/i.test(target));
}

test(`the README is at most ${README_MAX_LINES} lines`, () => {
  const lines = README.split('\n').length - (README.endsWith('\n') ? 1 : 0);
  assert.ok(lines <= README_MAX_LINES, `README.md has ${lines} lines: move the detail to a page of docs/`);
});

test('every relative link of the README and docs/ names a file that exists, and an anchor a heading of it', () => {
  for (const file of MANUAL_FILES) {
    for (const target of links(doc(file))) {
      const [path = '', anchor] = target.split('#');
      const resolved = path === '' ? file : normalize(join(dirname(file), decodeURIComponent(path)));
      assert.ok(existsSync(resolved), `${file} links ${target}: ${resolved} does not exist`);
      if (anchor === undefined || !resolved.endsWith('.md')) continue;
      assert.ok(
        anchors(readFileSync(resolved, 'utf8')).has(anchor),
        `${file} links ${target}: ${resolved} has no heading #${anchor}`,
      );
    }
  }
});

test('the README links every page of docs/', () => {
  const linked = new Set(links(README).map((target) => target.split('#')[0]));
  for (const page of readdirSync('docs').filter((name) => name.endsWith('.md')))
    assert.ok(linked.has(`docs/${page}`), `the README does not link docs/${page}`);
});

test('every table of the README and docs/ has exactly one delimiter row, under its header row', () => {
  const delimiter = /^\|(\s*:?-{3,}:?\s*\|)+$/;
  for (const file of MANUAL_FILES) {
    const lines = doc(file).split('\n');
    for (const [i, line] of lines.entries()) {
      if (!delimiter.test(line)) continue;
      assert.ok(!delimiter.test(lines[i + 1] ?? ''), `${file} line ${i + 2} is a second delimiter row`);
      assert.match(lines[i - 1] ?? '', /^\|/, `${file} line ${i + 1}: a delimiter row without a header row`);
    }
  }
});

test("the README's deployment blocks are the commands of docs/deploy.md's table, which its test runs", () => {
  const table = tableRows(docSection('deploy.md', 'Deployments'), 'who')
    .map(([, command = '']) => codeSpans(command)[0] ?? '')
    .filter((command) => !command.startsWith('npm '));
  const blocks = fencedBlocks(docSection('README.md', 'Deployments'), 'sh').flatMap(shellCommands);
  assert.deepEqual(blocks, table);
});

test("the README's tool and route tables name the tools and routes docs/tools.md and docs/rest.md describe", () => {
  const names = (text: string, header: string) =>
    new Set(
      tableRows(text, header).flatMap(([first = '']) => codeSpans(first).filter((span) => /^[a-z_]+$/.test(span))),
    );
  const tools = names(docSection('tools.md', 'Tools (MCP)'), 'tool');
  for (const name of ['list_rag', 'search_rag']) tools.add(name);
  assert.deepEqual([...names(docSection('README.md', 'Tools'), 'tool')].sort(), [...tools].sort());
  // Routes: the README's spans are `METHOD /path`, or a bare `/path` sharing the row's method.
  const routes = (text: string) =>
    new Set(
      tableRows(text, 'route').flatMap(([first = '']) => {
        const spans = codeSpans(first);
        const method = /^[A-Z]+/.exec(spans[0] ?? '')?.[0] ?? '';
        return spans.map((span) => (/^[A-Z]+ /.test(span) ? span : `${method} ${span}`));
      }),
    );
  assert.deepEqual(
    [...routes(docSection('README.md', 'REST API'))].sort(),
    [...routes(docSection('rest.md', 'REST API'))].sort(),
  );
});

/** Programs the manual's shell blocks may call besides npm and arkivector. */
const PROGRAMS = new Set(['curl', 'claude', 'printf', 'jq']);
const NPM_COMMANDS = new Set(['install', 'start', 'test', 'pack']);

/** The simple commands of one shell line: pipelines and `&&` lists split outside quotes, a trailing comment and
 * leading VAR=value assignments dropped. */
function simpleCommands(line: string): string[][] {
  const parts: string[] = [];
  let quote = '';
  let current = '';
  for (let i = 0; i < line.length; i++) {
    const c = line[i] ?? '';
    if (quote === '' && (c === "'" || c === '"')) quote = c;
    else if (c === quote) quote = '';
    else if (quote === '' && c === '#' && /\s/.test(line[i - 1] ?? '')) break;
    else if (quote === '' && (line.startsWith(' | ', i) || line.startsWith(' && ', i))) {
      parts.push(current);
      current = '';
      i += line.startsWith(' | ', i) ? 2 : 3;
      continue;
    }
    current += c;
  }
  parts.push(current);
  return parts
    .map((part) => part.trim().split(/\s+/))
    .map((words) => words.slice(words.findIndex((word) => !/^[A-Z_]+=/.test(word))));
}

async function answersHelp(args: string[]): Promise<boolean> {
  const child = spawn(process.execPath, ['bin/arkivector.js', ...args, '--help'], { stdio: 'ignore' });
  const [code] = (await once(child, 'exit')) as [number | null];
  return code === 0;
}

test('every shell command the README and docs/ show names a program, an npm script or an arkivector command that exists', async () => {
  const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts;
  const commands = new Set<string>();
  for (const file of MANUAL_FILES)
    for (const line of fencedBlocks(doc(file), 'sh').flatMap(shellCommands))
      for (const [program = '', ...args] of simpleCommands(line)) {
        if (program === 'npm') {
          const [verb = '', script = ''] = args;
          if (verb === 'run') assert.ok(script in scripts, `${file}: npm run ${script} is not a script`);
          else assert.ok(NPM_COMMANDS.has(verb), `${file}: npm ${verb}`);
          if (verb === 'install' && args[1] === '-g') assert.equal(args[2], `./arkivector-${VERSION}.tgz`, file);
        } else if (program === 'arkivector') {
          const sub = args[0] ?? '';
          if (sub.startsWith('-')) continue;
          commands.add(['collection', 'model'].includes(sub) ? `${sub} ${args[1] ?? ''}` : sub);
        } else assert.ok(PROGRAMS.has(program), `${file}: a command of an unknown program: ${line}`);
      }
  assert.ok(commands.size >= 8, [...commands].join(', '));
  for (const command of commands)
    assert.ok(await answersHelp(command.split(' ')), `arkivector ${command} --help does not answer`);
});

test('the README says how to run the tests, with a script that exists', () => {
  const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts;
  assert.match(docSection('README.md', 'Quick start'), /`npm test` runs the test suite/);
  assert.ok(scripts.test, 'package.json has a test script');
});
