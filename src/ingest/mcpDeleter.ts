// Deletes through the gateway's `arkivector_delete` MCP tool: it takes up to UPSERT_MAX_ENTITIES refs in
// one transaction, where the REST route deletes one entity per request (and per transaction).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { GatewayProblemError, GatewayUnreachableError } from '../client/restClient.ts';
import type { Problem } from '../errors.ts';

export interface Deleted {
  tx_hashes: string[];
  block_number: number | null;
}

export interface Deleter {
  delete(collection: string, ids: string[]): Promise<Deleted>;
  close(): Promise<void>;
}

export function mcpDeleter(gatewayUrl: string, token: string | undefined): Deleter {
  let connected: Promise<Client> | undefined;
  const connect = async () => {
    const base = new URL(gatewayUrl);
    if (!base.pathname.endsWith('/')) base.pathname += '/';
    const client = new Client({ name: 'arkivector-ingest', version: '1.0.0' });
    const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL('mcp', base), { requestInit: { headers } }));
    } catch (error) {
      throw new GatewayUnreachableError(`cannot open an MCP session with the gateway: ${(error as Error).message}`);
    }
    return client;
  };
  return {
    async delete(collection, ids) {
      connected ??= connect();
      const client = await connected;
      const result = (await client.callTool(
        { name: 'arkivector_delete', arguments: { collection, refs: ids, dry_run: false, wait: 'indexed' } },
        undefined,
        { timeout: 120_000 },
      )) as CallToolResult;
      if (result.isError) {
        const text = (result.content[0] as { text?: string } | undefined)?.text ?? '';
        let problem: Problem;
        try {
          problem = JSON.parse(text);
        } catch {
          problem = { type: 'about:blank', code: 'tx_failed', status: 502, title: 'delete failed', detail: text };
        }
        throw new GatewayProblemError(problem);
      }
      const body = (result.structuredContent ?? {}) as unknown as Partial<Deleted>;
      return { tx_hashes: body.tx_hashes ?? [], block_number: body.block_number ?? null };
    },
    async close() {
      if (connected) await (await connected.catch(() => undefined))?.close();
    },
  };
}
