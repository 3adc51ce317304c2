// The public MCP surface, pinned: tool names, titles, annotations and argument/answer schemas for a node
// with a signer and --compat kuradb. A change here must be deliberate: regenerate the snapshot with
// ARKIVECTOR_UPDATE_SNAPSHOTS=1 npm test, and review the diff of test/tools/tool-surface.json.
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { ServiceContext } from '../../src/service/index.ts';
import { buildServer } from '../../tools/index.ts';

const SNAPSHOT = new URL('./tool-surface.json', import.meta.url);

test('tools/list surface matches the snapshot (with signer and --compat kuradb)', async () => {
  // Listing tools runs no handler, so the context only needs to say that a signer exists.
  const ctx = { writer: { address: '0x0000000000000000000000000000000000000001' } } as unknown as ServiceContext;
  const server = buildServer({ ctx, compat: 'kuradb' });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'surface', version: '1.0.0' });
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  try {
    const { tools } = await client.listTools();
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
        'arkivector_search',
        'arkivector_upsert',
        'list_rag',
        'search_rag',
      ],
    );
  } finally {
    await client.close();
    await server.close();
  }
});
