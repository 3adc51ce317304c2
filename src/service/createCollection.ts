// create collection: writes a collection definition entity owned by this node's signer.
import { encodeCollectionEntity, ttlToBlocks, type CollectionDefinitionInput } from '../collections/index.ts';
import { entityKey } from '../chain/protocol.ts';
import { emptyStorageOps } from '../chain/storageTransaction.ts';
import type { ServiceContext } from './context.ts';
import { ConflictError } from './errors.ts';
import { createCollectionSchema, type CreateCollectionResult } from './schemas.ts';
import { requireWriter, submit, type ProgressReporter } from './submit.ts';
import { validate } from './validate.ts';
import { readView } from './view.ts';

/** Definitions live long; a write daemon extends its own before they expire. */
const DEFINITION_TTL = { days: 365 } as const;

export async function createCollection(
  ctx: ServiceContext,
  params: unknown,
  onProgress?: ProgressReporter,
): Promise<CreateCollectionResult> {
  requireWriter(ctx);
  const { name, ttl, wait, ...definition } = validate(createCollectionSchema, params);
  const entity = encodeCollectionEntity(name, definition as CollectionDefinitionInput);
  const view = (await readView(ctx))();
  const existing = view.collections.get(name);
  if (existing)
    throw new ConflictError(`collection ${name} already exists (owner ${existing.owner})`, {
      collection: name,
      owner: existing.owner,
    });
  const create = {
    btl: BigInt(ttlToBlocks(ttl ?? DEFINITION_TTL)),
    contentType: entity.contentType,
    payload: entity.payload,
    stringAttributes: entity.attributes,
    numericAttributes: [],
  };
  const { hash, block_number } = await submit(ctx, { ...emptyStorageOps(), creates: [create] }, wait, onProgress);
  return { name, key: entityKey(hash, entity.payload, 0), tx_hashes: [hash], block_number };
}
