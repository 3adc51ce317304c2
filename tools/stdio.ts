// MCP over stdio: stdout belongs to the protocol, so nothing else may write to it.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { buildServer, type BuildServerDeps } from './server.ts';

export async function serveStdio(deps: BuildServerDeps): Promise<{ close(): Promise<void> }> {
  const server = buildServer(deps);
  const transport = new StdioServerTransport();
  await server.connect(transport);
  return { close: () => server.close() };
}
