// `arkivector serve --stdio` as an agent host starts it, driven by the real MCP SDK Client, and the
// small readers of tool answers the stdio tests share.
import assert from 'node:assert/strict';
import { createServer, type AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

export type Problem = { code: string; status: number; detail: string; [k: string]: unknown };

/** A successful tool answer's structured content. */
export const ok = <T>(result: unknown) => {
  const r = result as CallToolResult;
  assert.notEqual(r.isError, true, JSON.stringify(r.content));
  return r.structuredContent as T;
};

/** A failed tool answer's problem object. */
export const problem = (result: unknown): Problem => {
  const r = result as CallToolResult;
  assert.equal(r.isError, true, JSON.stringify(r.structuredContent));
  return JSON.parse((r.content[0] as { text: string }).text) as Problem;
};

/** A port free right now, for the embedded devnet's stable --devnet-port across restarts. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface StdioNode {
  client: Client;
  stderr: () => string;
}

/**
 * `serve --stdio` with `args` after the common ones (warn logs, a 60 s min_block wait).
 * @param env the child's whole environment besides the SDK's safe defaults: no signer leaks in
 */
export async function startStdioNode(args: string[], env: Record<string, string> = {}): Promise<StdioNode> {
  let stderr = '';
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['bin/arkivector.js', 'serve', '--stdio', '--log-level', 'warn', '--min-block-timeout', '60', ...args],
    env,
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: 'arkivector-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, stderr: () => stderr };
}
