// arkivector_count: exact count of live entities passing an optional filter.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { count, type CountResult, type ServiceContext } from '../src/service/index.ts';
import { countArgs, countResultShape } from '../src/service/schemas.ts';
import { run, type Logger } from './result.ts';

export const renderCount = (answer: CountResult) =>
  `${answer.count} entities as of block ${answer.as_of_block} (sync ${answer.sync_state})`;

export function registerCount(server: McpServer, ctx: ServiceContext, logger?: Logger): void {
  server.registerTool(
    'arkivector_count',
    {
      title: 'Count entities',
      description:
        'Counts (exactly) the live entities of a collection, optionally only those passing where (Arkiv syntax) and/or filter (JSON), as of the block in as_of_block.',
      inputSchema: countArgs,
      outputSchema: countResultShape,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async (args) => run(() => count(ctx, args), renderCount, logger),
  );
}
