// The MCP tool surface as a client sees it: tools/list of a node with a signer, --verify-rpc and --compat kuradb,
// through the SDK's real Client over an in-memory transport.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ServiceContext } from '../../src/service/index.ts';
import { buildServer } from '../../tools/index.ts';

export async function listedTools(): Promise<Tool[]> {
  // Listing tools runs no handler, so the context only needs to say that a signer exists.
  const ctx = {
    writer: { address: '0x0000000000000000000000000000000000000001' },
    verifyRpc: { url: 'http://127.0.0.1:9' },
  } as unknown as ServiceContext;
  const server = buildServer({ ctx, compat: 'kuradb' });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'surface', version: '1.0.0' });
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  try {
    return (await client.listTools()).tools;
  } finally {
    await client.close();
    await server.close();
  }
}
