// upsert: writes 1-100 vector entities in one transaction; an id this signer already owns is updated,
// an id owned by another writer is a conflict. An entity may carry a document without a vector: this
// node's embedder embeds it (text write). The whole batch is validated and embedded before anything is
// signed, and embedding happens outside the signer's write queue (it may be slow).
import { ArkivectorError } from '../errors.ts';
import { encodeVectorEntity, type CollectionDefinition, type Ttl } from '../collections/index.ts';
import { emptyBatch, type CreateOp } from '../chain/index.ts';
import { defined } from '../defined.ts';
import type { ServiceContext } from './context.ts';
import {
  CONFIGURE_EMBEDDER,
  ConflictError,
  EmbedderUnavailableError,
  ForbiddenError,
  InvalidArgumentError,
  TxFailedError,
} from './errors.ts';
import { embedTexts, textEmbedder } from './textEmbedder.ts';
import { expiryAfterWrite, lifetimeBtl } from './lifetime.ts';
import { upsertSchema, type UpsertParameters, type UpsertResult } from './schemas.ts';
import { requireWriter, submit, type ProgressReporter } from './submit.ts';
import { validate } from './validate.ts';
import { claim, entityName } from './inFlight.ts';
import { collectionIn, readView, type View } from './view.ts';
import type { PublishedCollection } from '../../indexer/index.ts';
import type { ReadableStore } from './context.ts';

export type { UpsertResult };

/** The written content of one entity; codec errors name the entity's position. */
export function vectorContent(
  collection: string,
  definition: CollectionDefinition,
  entity: {
    id: string;
    vector: number[];
    document?: string;
    attributes?: Record<string, unknown>;
    ttl?: Ttl;
  },
  index: number,
): CreateOp {
  try {
    const encoded = encodeVectorEntity(
      { collection, id: entity.id, vector: entity.vector, document: entity.document, attributes: entity.attributes },
      definition,
    );
    return {
      btl: lifetimeBtl(entity.ttl, definition.default_ttl),
      contentType: encoded.contentType,
      payload: encoded.payload,
      stringAttributes: encoded.stringAttributes,
      numericAttributes: encoded.numericAttributes.map((a) => ({
        key: a.key,
        value: BigInt(a.value),
        type: definition.attributes[a.key] as 'i32' | 'uint' | 'f32' | 'bool',
      })),
    };
  } catch (error) {
    if (error instanceof ArkivectorError) {
      throw new ArkivectorError(error.code, `entities[${index}]: ${error.shortMessage}`, {
        // The same `errors` list as a schema error, so every invalid_argument reads alike (README, "Errors").
        meta: { ...error.meta, index, errors: entityErrors(error, index) },
      });
    }
    throw error;
  }
}

const entityErrors = (error: ArkivectorError, index: number) =>
  (
    (error.meta.errors as { path: string; message: string }[] | undefined) ?? [
      { path: '', message: error.shortMessage },
    ]
  ).map((e) => ({ path: e.path ? `entities.${index}.${e.path}` : `entities.${index}`, message: e.message }));

export async function upsert(
  ctx: ServiceContext,
  params: unknown,
  onProgress?: ProgressReporter,
): Promise<UpsertResult> {
  const writer = requireWriter(ctx);
  const args = validate(upsertSchema, params);
  const seen = new Set<string>();
  args.entities.forEach((entity, index) => {
    if (seen.has(entity.id))
      throw new InvalidArgumentError(`entities[${index}].id: ${JSON.stringify(entity.id)} appears twice in the batch`, [
        { path: `entities.${index}.id`, message: 'duplicate id' },
      ]);
    seen.add(entity.id);
    if (!entity.vector && !entity.document?.trim())
      throw new InvalidArgumentError(
        `entities[${index}]: a vector, or a document for this node's embedder to embed, is required`,
        [{ path: `entities.${index}.vector`, message: 'required when document is absent or empty' }],
      );
  });
  const view = await readView(ctx);
  // Fail fast (unknown collection, closed to this signer, wrong embedder) before embedding.
  writable(collectionIn(view(), args.collection), writer.address);
  const filled = await embedDocuments(ctx, view(), args);
  // Fail fast (bad values) before waiting behind other writes.
  plan(view(), filled, writer.address, landing(ctx, view()));
  // The store is read after earlier writes of the same ids are indexed, so a second upsert of a new id
  // updates the entity the first created.
  const release = await claim(
    writer,
    args.entities.map((e) => entityName(args.collection, e.id)),
  );
  let submitted;
  let planned;
  try {
    planned = plan(view(), filled, writer.address, landing(ctx, view()));
    try {
      submitted = await submit(ctx, planned.ops, args.wait, onProgress);
    } catch (error) {
      // Entities this node still lists that the chain no longer holds (expired since it read them, with
      // the node behind): the ids are free again, so they are written anew.
      const gone = notLive(error);
      if (!gone) throw error;
      planned = plan(view(), filled, writer.address, landing(ctx, view()), gone);
      submitted = await submit(ctx, planned.ops, args.wait, onProgress);
    }
  } finally {
    release(submitted?.settled);
  }
  const { hash, keys, block_number } = submitted;
  const { steps } = planned;
  return {
    results: steps.map((p) => ({
      id: p.id,
      op: p.op,
      key: p.op === 'update' ? p.key : defined(keys[p.create], `key of create ${p.create}`),
      // Known once the block is: the life asked for from that block (on the DB-chain never shorter than before).
      expires_at_block:
        block_number === null ? null : expiryAfterWrite(ctx.chain.protocol, p.btl, block_number, p.current),
    })),
    tx_hashes: [hash],
    block_number,
  };
}

type Entity = UpsertParameters['entities'][number];
type Filled = Omit<UpsertParameters, 'entities'> & { entities: (Entity & { vector: number[] })[] };

function writable(c: PublishedCollection<ReadableStore>, signer: string): void {
  if (!c.definition.open && signer !== c.owner && !c.definition.writers.includes(signer as `0x${string}`)) {
    throw new ForbiddenError(
      `collection ${c.name} is closed and this node's signer ${signer} is not among its writers`,
      {
        collection: c.name,
        signer,
      },
    );
  }
}

/** The batch with a vector for every entity: documents without one embedded by this node, in batches. */
async function embedDocuments(ctx: ServiceContext, view: View, args: UpsertParameters): Promise<Filled> {
  const texts = args.entities.flatMap((e, index) => (e.vector ? [] : [{ index, document: e.document ?? '' }]));
  const [first] = texts;
  if (first === undefined) return args as Filled;
  const c = collectionIn(view, args.collection);
  const embedder = textEmbedder(
    ctx,
    c,
    `entities[${first.index}] has a document but no vector, and this node has no embedder: pass vector, or ${CONFIGURE_EMBEDDER}`,
  );
  const vectors = await embedTexts(
    embedder,
    texts.map((t) => t.document),
  );
  const entities = [...args.entities];
  texts.forEach(({ index }, n) => {
    const vector = vectors[n];
    const entity = entities[index];
    if (vector === undefined || entity === undefined)
      throw new EmbedderUnavailableError(
        `the embedder ${embedder.model} answered ${vectors.length} vectors for ${texts.length} documents`,
      );
    if (vector.length !== c.definition.dim)
      throw new ArkivectorError(
        'dimension_mismatch',
        `entities[${index}]: the embedder ${embedder.model} gives ${vector.length} dimensions, collection ${c.name} holds ${c.definition.dim}`,
        { meta: { index, expected: c.definition.dim, got: vector.length, model: embedder.model } },
      );
    entities[index] = { ...entity, vector };
  });
  return { ...args, entities } as Filled;
}

/**
 * The soonest block a write sent now can land in: the one after the head the node expects now (its last
 * head read plus the blocks since, on a node paced to its call budget).
 */
const landing = (ctx: ServiceContext, view: View): bigint =>
  BigInt((ctx.indexer.headBlockEstimated ?? ctx.indexer.headBlock ?? view.as_of_block) + 1);

/** The keys of a refused write's updates whose entities are not live on the chain, if that was why. */
function notLive(error: unknown): Set<string> | undefined {
  if (!(error instanceof TxFailedError)) return undefined;
  const keys = error.meta.not_live;
  return Array.isArray(keys) && keys.length ? new Set(keys.map((k) => String(k).toLowerCase())) : undefined;
}

/**
 * The entity batch of a validated upsert against one view: updates for ids this signer owns whose entity
 * outlives the block the write lands in (`landing`), creates for the rest, and for the entities in `gone`
 * (the chain said they are not live).
 */
function plan(view: View, args: Filled, signer: string, landing: bigint, gone?: ReadonlySet<string>) {
  const c = collectionIn(view, args.collection);
  writable(c, signer);
  const ops = emptyBatch();
  type Step = { id: string; btl: bigint } & (
    | { op: 'update'; key: string; current: bigint }
    | { op: 'create'; create: number; current?: undefined }
  );
  const steps: Step[] = [];
  args.entities.forEach((entity, index) => {
    const content = vectorContent(c.name, c.definition, entity, index);
    const found = c.store.get(entity.id);
    const existing =
      found && found.id === entity.id && found.expiresAt > landing && !gone?.has(found.key.toLowerCase())
        ? found
        : undefined;
    if (existing) {
      if (existing.owner !== signer) {
        throw new ConflictError(`id ${JSON.stringify(entity.id)} belongs to another writer (${existing.owner})`, {
          id: entity.id,
          owner: existing.owner,
          key: existing.key,
        });
      }
      ops.updates.push({ entityKey: existing.key as `0x${string}`, ...content });
      steps.push({ id: entity.id, btl: content.btl, op: 'update', key: existing.key, current: existing.expiresAt });
    } else {
      steps.push({ id: entity.id, btl: content.btl, op: 'create', create: ops.creates.length });
      ops.creates.push(content);
    }
  });
  return { ops, steps };
}
