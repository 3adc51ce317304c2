// arkivector_create_collection (signer only): writes a collection definition; on a node with an embedder
// `dim` may be omitted. Idempotent for this signer's identical definition, conflict otherwise.
import { createCollection } from '../src/service/index.ts';
import { DIM_MAX } from '../src/collections/index.ts';
import {
  createCollectionArgs,
  createCollectionResultShape,
  type CreateCollectionResult,
} from '../src/service/schemas.ts';
import { defineTool } from './defineTool.ts';

export function renderCreateCollection(answer: CreateCollectionResult): string {
  const what = `collection ${answer.name} (dim ${answer.dim}${answer.embedder ? `, embedder ${String(answer.embedder.model)}: upsert document-only entities and search by text` : ''})`;
  if (!answer.created) return `${what} already exists with this definition; nothing written (key ${answer.key}).`;
  const tx = `(tx ${answer.tx_hashes.join(', ')}, key ${answer.key})`;
  return [
    // wait "none": sent, not created until it is mined.
    answer.block_number === null
      ? `Sent ${what}, not yet mined ${tx}.`
      : `Created ${what} in block ${answer.block_number} ${tx}.`,
    ...(answer.block_number === null ? [] : [`Other nodes see it with min_block ${answer.block_number}.`]),
  ].join('\n');
}

export const createCollectionTool = defineTool({
  name: 'arkivector_create_collection',
  title: 'Create a collection',
  description: ({ model }) =>
    `Creates a vector collection on chain, owned by this node's wallet: name, metric, declared attributes, who may write. ${model ? `Omit dim (1-${DIM_MAX}) to take the dimension of this node's embedder, ${model}, and record it, so entities can be written as text (document only) and searched by text.` : `dim (1-${DIM_MAX}) is required: this node has no embedder.`} Creating the same collection again answers the existing one (created: false); a different definition under a taken name is a conflict.`,
  input: createCollectionArgs,
  output: createCollectionResultShape,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  needs: 'write',
  call: (ctx, args, { progress }) => createCollection(ctx, args, progress),
  render: renderCreateCollection,
});
