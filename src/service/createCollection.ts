// create collection: writes a collection definition entity owned by this node's signer.
import { encodeCollectionEntity, ttlToBlocks, type CollectionDefinitionInput } from '../collections/index.ts';
import { entityKey } from '../chain/protocol.ts';
import { emptyStorageOps } from '../chain/storageTransaction.ts';
import type { ServiceContext } from './context.ts';
import { ConflictError } from './errors.ts';
import { createCollectionSchema, type CreateCollectionResult } from './schemas.ts';
import { requireWriter, submit, type ProgressReporter } from './submit.ts';
import { claim, definitionName } from './inFlight.ts';
import { validate } from './validate.ts';
import { readView } from './view.ts';

/** Definitions live long; a write daemon extends its own before they expire. */
const DEFINITION_TTL = { days: 365 } as const;

export async function createCollection(
  ctx: ServiceContext,
  params: unknown,
  onProgress?: ProgressReporter,
): Promise<CreateCollectionResult> {
  const writer = requireWriter(ctx);
  const { name, ttl, wait, ...definition } = validate(createCollectionSchema, params);
  const entity = encodeCollectionEntity(name, definition as CollectionDefinitionInput);
  const view = await readView(ctx);
  const ensureNew = () => {
    const existing = view().collections.get(name);
    if (existing)
      throw new ConflictError(`collection ${name} already exists (owner ${existing.owner})`, {
        collection: name,
        owner: existing.owner,
      });
  };
  ensureNew();
  const create = {
    btl: BigInt(ttlToBlocks(ttl ?? DEFINITION_TTL)),
    contentType: entity.contentType,
    payload: entity.payload,
    stringAttributes: entity.attributes,
    numericAttributes: [],
  };
  // A second create of the same name waits until the first is indexed, then finds it.
  const release = await claim(writer, [definitionName(name)]);
  let submitted;
  try {
    ensureNew();
    submitted = await submit(ctx, { ...emptyStorageOps(), creates: [create] }, wait, onProgress);
  } finally {
    release(submitted?.settled);
  }
  return {
    name,
    key: entityKey(submitted.hash, entity.payload, 0),
    tx_hashes: [submitted.hash],
    block_number: submitted.block_number,
  };
}
