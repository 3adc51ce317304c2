// The public MCP surface, pinned: tool names, titles, annotations and argument/answer schemas for a node
// with a signer, --verify-rpc and --compat kuradb. A change here must be deliberate: regenerate the snapshot with
// ARKIVECTOR_UPDATE_SNAPSHOTS=1 npm test, and review the diff of test/tools/tool-surface.json.
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { test } from 'node:test';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { JsonSchemaType } from '@modelcontextprotocol/sdk/validation/types.js';
import fc from 'fast-check';
import { z } from 'zod';
import { portabilityProblems, portableSchema } from '../../tools/portableSchema.ts';
import { TOOLS } from '../../tools/table.ts';
import { listedTools } from '../helpers/toolSurface.ts';

const SNAPSHOT = new URL('./tool-surface.json', import.meta.url);

test('tools/list surface matches the snapshot (with signer and --compat kuradb)', async () => {
  const tools = await listedTools();
  // Through JSON, as a client receives it (absent fields stay absent).
  const surface = JSON.parse(
    JSON.stringify(
      tools
        .map((t) => ({
          name: t.name,
          title: t.title,
          annotations: t.annotations,
          inputSchema: t.inputSchema,
          outputSchema: t.outputSchema,
        }))
        .sort((a, b) => (a.name < b.name ? -1 : 1)),
    ),
  ) as { name: string }[];
  if (process.env.ARKIVECTOR_UPDATE_SNAPSHOTS === '1')
    await writeFile(SNAPSHOT, `${JSON.stringify(surface, null, 2)}\n`);
  assert.deepEqual(surface, JSON.parse(await readFile(SNAPSHOT, 'utf8')));
  assert.deepEqual(
    surface.map((t) => t.name),
    [
      'arkivector_count',
      'arkivector_create_collection',
      'arkivector_delete',
      'arkivector_get',
      'arkivector_list_collections',
      'arkivector_list_entities',
      'arkivector_search',
      'arkivector_upsert',
      'arkivector_verify',
      'list_rag',
      'search_rag',
    ],
  );
});

test('every published tool schema is portable: no `additionalProperties: {}`, no `type` arrays', async () => {
  const tools = await listedTools();
  assert.ok(tools.length >= 10);
  const problems = tools.flatMap((t) => [
    ...portabilityProblems(t.inputSchema, `${t.name}/inputSchema`),
    ...portabilityProblems(t.outputSchema, `${t.name}/outputSchema`),
  ]);
  assert.deepEqual(problems, []);
});

test('a portable schema accepts exactly what the schema zod derived accepts', () => {
  const validator = new AjvJsonSchemaValidator();
  for (const tool of TOOLS)
    for (const [io, shape] of [
      ['input', tool.input],
      ['output', tool.output],
    ] as const) {
      const derived = z.toJSONSchema(z.object(shape), { target: 'draft-7', io }) as JsonSchemaType;
      const portable = portableSchema(derived);
      const before = validator.getValidator(derived);
      const after = validator.getValidator(portable);
      // Values under the schema's own property names, so nested objects, records and unions are reached.
      const names = Object.keys((derived as { properties?: object }).properties ?? {});
      const value = fc.dictionary(names.length ? fc.constantFrom(...names) : fc.string(), fc.jsonValue(), {
        maxKeys: 6,
      });
      fc.assert(
        fc.property(value, (input) => before(input).valid === after(input).valid),
        { numRuns: 150 },
      );
    }
});
