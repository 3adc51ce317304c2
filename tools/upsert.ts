// arkivector_upsert (signer only): writes vectors on chain; progress sent -> receipt -> indexed.
import { upsert, type UpsertResult } from '../src/service/index.ts';
import { UPSERT_MAX_ENTITIES } from '../src/service/limits.ts';
import { upsertArgs, upsertResultShape } from '../src/service/schemas.ts';
import { defineTool } from './defineTool.ts';

const lifetimeText = (expires: number | 'never' | null) =>
  expires === null ? '' : expires === 'never' ? ', kept until deleted' : `, expires at block ${expires}`;

export function renderUpsert(answer: UpsertResult): string {
  const entities = `${answer.results.length} entit${answer.results.length === 1 ? 'y' : 'ies'}`;
  // wait "none": the transaction is sent, nothing is written until it is mined.
  const what =
    answer.block_number === null
      ? `${entities} sent, not yet mined`
      : `${entities} written in block ${answer.block_number}`;
  return [
    `${what} (tx ${answer.tx_hashes.join(', ')})`,
    ...answer.results.map((r) => `- ${r.id}: ${r.op} ${r.key}${lifetimeText(r.expires_at_block)}`),
    ...(answer.block_number === null ? [] : [`Read it back from any node with min_block ${answer.block_number}.`]),
  ].join('\n');
}

export const upsertTool = defineTool({
  name: 'arkivector_upsert',
  title: 'Write vectors',
  description: ({ model }) =>
    `Writes 1-${UPSERT_MAX_ENTITIES} entities (id, ${model ? `a document alone, which this node embeds with ${model}, or a vector with the collection's dimension` : "a vector with the collection's dimension (this node has no embedder, so a document alone is refused)"}; optional document, declared attributes and ttl) to a collection in one on-chain transaction paid by this node's wallet. An id this node already wrote is updated; an id owned by another writer is refused (conflict). wait: indexed (default, returns once searchable here), receipt or none. The answer's block_number works as min_block on any node.`,
  input: upsertArgs,
  output: upsertResultShape,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  needs: 'write',
  call: (ctx, args, { progress }) => upsert(ctx, args, progress),
  render: renderUpsert,
});
