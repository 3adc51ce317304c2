// create collection (MCP arkivector_create_collection and POST /v1/collections): writes a collection
// definition entity owned by this node's signer. On a node with an embedder, `dim` may be omitted and
// the embedder is recorded, so text writes and text searches can check the model later. Creating again
// what this signer already created answers the existing collection; anything else under the name is a
// conflict.
import {
  encodeCollectionEntity,
  validateCollectionDefinition,
  type CollectionDefinition,
  type CollectionDefinitionInput,
} from '../collections/index.ts';
import { emptyBatch } from '../chain/index.ts';
import { defined } from '../defined.ts';
import type { ServiceContext } from './context.ts';
import { CONFIGURE_EMBEDDER, ConflictError, InvalidArgumentError } from './errors.ts';
import { createCollectionSchema, type CreateCollectionResult } from './schemas.ts';
import { requireWriter, submit, type ProgressReporter } from './submit.ts';
import { claim, definitionName } from './inFlight.ts';
import { refuseUnfollowed, refuseUnserved } from './definitionAdmission.ts';
import { validate } from './validate.ts';
import { lifetimeBtl } from './lifetime.ts';
import { readView, type View } from './view.ts';

export async function createCollection(
  ctx: ServiceContext,
  params: unknown,
  onProgress?: ProgressReporter,
): Promise<CreateCollectionResult> {
  const writer = requireWriter(ctx);
  const { name, ttl, wait, ...input } = validate(createCollectionSchema, params);
  // The codec validates the definition's inner shapes (attributes, ttl, index, embedder) below.
  const definition = await withEmbedder(ctx, input as Omit<CollectionDefinitionInput, 'dim'> & { dim?: number });
  const entity = encodeCollectionEntity(name, definition);
  const wanted = validateCollectionDefinition(definition);
  const view = await readView(ctx);
  const existing = () => sameOrConflict(view(), name, wanted, writer.address);
  const answer = (key: string, created: boolean, hashes: string[], block: number | null) => ({
    name,
    key,
    created,
    dim: wanted.dim,
    ...(wanted.embedder ? { embedder: { ...wanted.embedder } } : {}),
    tx_hashes: hashes,
    block_number: block,
  });
  const found = existing();
  if (found) return answer(found.key, false, [], found.block);
  refuseUnfollowed(ctx, name, writer.address);
  const create = {
    // Kept until deleted unless told: a lapsed definition would orphan every memory written into it.
    btl: lifetimeBtl(ttl),
    contentType: entity.contentType,
    payload: entity.payload,
    stringAttributes: entity.attributes,
    numericAttributes: [],
  };
  // A second create of the same name waits until the first is indexed, then finds it.
  const release = await claim(writer, [definitionName(name)]);
  let submitted;
  try {
    const raced = existing();
    if (raced) return answer(raced.key, false, [], raced.block);
    submitted = await submit(ctx, { ...emptyBatch(), creates: [create] }, wait, onProgress);
  } finally {
    release(submitted?.settled);
  }
  const key = defined(submitted.keys[0], 'key of the definition created');
  if (wait === 'indexed')
    refuseUnserved(ctx, name, writer.address, { key, hash: submitted.hash, block: submitted.block_number });
  return answer(key, true, [submitted.hash], submitted.block_number);
}

/**
 * The definition to write: `dim` from the node's embedder when omitted (and `embedder` absent or naming
 * the node's model), and the node's embedder recorded when it produces vectors of the collection's
 * dimension (a collection of another dimension takes vectors only). An explicit `embedder` with a `dim`
 * is written as given.
 */
async function withEmbedder(
  ctx: ServiceContext,
  input: Omit<CollectionDefinitionInput, 'dim'> & { dim?: number },
): Promise<CollectionDefinitionInput> {
  const { embedder } = ctx;
  const given = input.embedder as { model?: unknown } | undefined;
  // dim comes from the node's embedder only when the definition would record that same model.
  const fromNode = embedder !== undefined && (given === undefined || given.model === embedder.model);
  if (input.dim === undefined && !fromNode)
    throw new InvalidArgumentError(
      embedder
        ? `dim: required when embedder.model is not this node's model (${embedder.model})`
        : `dim: required on a node without an embedder (to omit dim, ${CONFIGURE_EMBEDDER})`,
      [{ path: 'dim', message: 'required' }],
    );
  if (!fromNode) return { ...input, dim: defined(input.dim, 'dim (checked above)') };
  if (given !== undefined && input.dim !== undefined) return { ...input, dim: input.dim };
  // A dim given for a model whose width is not known yet (a hub model outside the catalog, not fetched):
  // recorded as given, without fetching a model to check it (a text write of another width is refused then).
  if (input.dim !== undefined && embedder.kind === 'local' && embedder.knownDimension?.() === undefined)
    return { ...input, dim: input.dim, embedder: { model: embedder.model, dim: input.dim } };
  const dim = await embedder.dimension();
  if (input.dim !== undefined && input.dim !== dim) return { ...input, dim: input.dim };
  return { ...input, dim, embedder: { ...given, model: embedder.model, dim } };
}

/** Sorted-key JSON: definitions read from chain may order `embedder`'s keys differently. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null)
    return `{${Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

/** The existing collection when it is this signer's with the same definition; conflict when it differs. */
function sameOrConflict(
  view: View,
  name: string,
  wanted: CollectionDefinition,
  signer: string,
): { key: string; block: number } | undefined {
  const existing = view.collections.get(name);
  if (!existing) return undefined;
  if (existing.owner.toLowerCase() !== signer.toLowerCase())
    throw new ConflictError(`collection ${name} already exists, owned by ${existing.owner}`, {
      collection: name,
      owner: existing.owner,
    });
  if (canonical(existing.definition) !== canonical(wanted))
    throw new ConflictError(
      `collection ${name} already exists with another definition (see arkivector_list_collections)`,
      { collection: name, owner: existing.owner },
    );
  return { key: existing.definitionKey, block: view.as_of_block };
}
