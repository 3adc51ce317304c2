// arkivector_upsert (signer only): writes vectors on chain; progress sent -> receipt -> indexed.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { upsert, type ServiceContext, type UpsertResult } from '../src/service/index.ts';
import { UPSERT_MAX_ENTITIES } from '../src/service/limits.ts';
import { upsertArgs, upsertResultShape } from '../src/service/schemas.ts';
import { progressReporter } from './progress.ts';
import { run, type Logger } from './result.ts';

export function renderUpsert(answer: UpsertResult): string {
  const where = answer.block_number === null ? 'sent, not yet mined' : `in block ${answer.block_number}`;
  return [
    `${answer.results.length} entit${answer.results.length === 1 ? 'y' : 'ies'} written ${where} (tx ${answer.tx_hashes.join(', ')})`,
    ...answer.results.map((r) => `- ${r.id}: ${r.op} ${r.key}`),
    ...(answer.block_number === null ? [] : [`Read it back from any node with min_block ${answer.block_number}.`]),
  ].join('\n');
}

export function registerUpsert(server: McpServer, ctx: ServiceContext, logger?: Logger): void {
  server.registerTool(
    'arkivector_upsert',
    {
      title: 'Write vectors',
      description: `Writes 1-${UPSERT_MAX_ENTITIES} entities (id, vector with the collection's dimension, optional document, declared attributes and ttl) to a collection in one on-chain transaction paid by this node's wallet. An id this node already wrote is updated; an id owned by another writer is refused (conflict). wait: indexed (default, returns once searchable here), receipt or none. The answer's block_number works as min_block on any node.`,
      inputSchema: upsertArgs,
      outputSchema: upsertResultShape,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    },
    async (args, extra) => run(() => upsert(ctx, args, progressReporter(extra)), renderUpsert, logger),
  );
}
