// Zod schemas of the operations' arguments and answers, shared by the MCP tools (input/output schemas)
// and the REST routes (request validation), so both surfaces accept and return exactly the same shapes.
import { z } from 'zod';
import {
  ATTRIBUTE_TYPES,
  COLLECTION_NAME_MAX_CHARS,
  DIM_MAX,
  ID_MAX_BYTES,
  ID_MIN_BYTES,
  METRICS,
  ttlSchema,
} from '../collections/index.ts';
import { SYNC_STATES } from '../../indexer/index.ts';
import { QUERY_VALUE_MAX } from '../engine/limits.ts';
import { SEARCH_MODES } from '../engine/index.ts';
import {
  COLLECTIONS_LIMIT_DEFAULT,
  COLLECTIONS_LIMIT_MAX,
  COLLECTIONS_LIMIT_MIN,
  CURSOR_MAX_CHARS,
  DOCUMENT_MAX_CHARS,
  LIST_LIMIT_DEFAULT,
  LIST_LIMIT_MAX,
  LIST_LIMIT_MIN,
  REF_MAX_CHARS,
  SEARCH_K_DEFAULT,
  SEARCH_K_MAX,
  SEARCH_K_MIN,
  TEXT_MAX_CHARS,
  UPSERT_MAX_ENTITIES,
  WHERE_MAX_CHARS,
} from './limits.ts';

export const collectionArg = z.string().min(1).max(COLLECTION_NAME_MAX_CHARS).describe('Collection name, e.g. "notes"');
export const minBlockArg = z
  .number()
  .int()
  .min(0)
  .optional()
  .describe(
    "Wait (up to the node's --min-block-timeout) until this block is indexed; pass the block_number of a write to read your own write",
  );
export const whereArg = z
  .string()
  .max(WHERE_MAX_CHARS)
  .optional()
  .describe(
    "Arkiv filter over the collection's attributes, e.g. topic = str('pets') && stars >= 4; also $owner, $creator, $key",
  );
export const filterArg = z
  .record(z.string(), z.unknown())
  .optional()
  .describe(
    'JSON filter, e.g. {"gte": {"stars": 4}}; {"and"|"or": [...]}, {"not": ...}, {"in": {attr: [...]}}, {"glob": {attr: "pat*"}}; ANDed with where',
  );

export const searchArgs = {
  collection: collectionArg,
  vector: z
    .array(z.number().min(-QUERY_VALUE_MAX).max(QUERY_VALUE_MAX))
    .min(1)
    .max(DIM_MAX)
    .optional()
    .describe(`Query embedding with the collection's dimension (finite, |x| <= ${QUERY_VALUE_MAX.toExponential()})`),
  text: z
    .string()
    .min(1)
    .max(TEXT_MAX_CHARS)
    .optional()
    .describe('Natural-language query; needs an embedder unless mode is "keyword"'),
  mode: z
    .enum(['vector', 'semantic', 'keyword', 'hybrid'])
    .optional()
    .describe(
      'vector (default with vector), semantic (embed text), keyword (BM25 over documents), hybrid (RRF of both)',
    ),
  k: z
    .number()
    .int()
    .min(SEARCH_K_MIN)
    .max(SEARCH_K_MAX)
    .default(SEARCH_K_DEFAULT)
    .describe(`Number of results, ${SEARCH_K_MIN}-${SEARCH_K_MAX} (default ${SEARCH_K_DEFAULT})`),
  where: whereArg,
  filter: filterArg,
  include_document: z.boolean().default(false).describe("Return each result's document"),
  min_block: minBlockArg,
};
export const searchSchema = z.object(searchArgs);
export type SearchParameters = z.input<typeof searchSchema>;

/**
 * Exactly what searchArgs.vector accepts (an array of 1 to DIM_MAX numbers within ±QUERY_VALUE_MAX; NaN
 * and infinities fail), checked in one loop: zod runs each element through its number schema, which
 * cost about a twentieth of a search request's CPU at dim 384.
 */
export function isQueryVector(value: unknown): value is number[] {
  if (!Array.isArray(value) || value.length < 1 || value.length > DIM_MAX) return false;
  for (let i = 0; i < value.length; i++) {
    const x: unknown = value[i];
    if (typeof x !== 'number' || !(x >= -QUERY_VALUE_MAX && x <= QUERY_VALUE_MAX)) return false;
  }
  return true;
}
/** searchSchema with the vector checked by isQueryVector: same accepted inputs and output, for valid input only. */
export const searchSchemaFast = searchSchema.extend({ vector: z.custom<number[]>(isQueryVector).optional() });

export const getArgs = {
  collection: collectionArg,
  ref: z.string().min(1).max(REF_MAX_CHARS).describe('Entity id, or its 0x entity key'),
  include_document: z.boolean().default(false).describe('Return the document'),
  min_block: minBlockArg,
};
export const getSchema = z.object(getArgs);
export type GetParameters = z.input<typeof getSchema>;

export const countArgs = { collection: collectionArg, where: whereArg, filter: filterArg, min_block: minBlockArg };
export const countSchema = z.object(countArgs);
export type CountParameters = z.input<typeof countSchema>;

export const listArgs = {
  min_block: minBlockArg,
  limit: z
    .number()
    .int()
    .min(COLLECTIONS_LIMIT_MIN)
    .max(COLLECTIONS_LIMIT_MAX)
    .default(COLLECTIONS_LIMIT_DEFAULT)
    .describe(
      `Collections per page, ${COLLECTIONS_LIMIT_MIN}-${COLLECTIONS_LIMIT_MAX} (default ${COLLECTIONS_LIMIT_DEFAULT}), by name`,
    ),
  cursor: z
    .string()
    .min(1)
    .max(COLLECTION_NAME_MAX_CHARS)
    .optional()
    .describe('next_cursor of the previous page: the page lists the names after it'),
};
export const listSchema = z.object(listArgs);

const syncState = z.enum(SYNC_STATES).describe('How far this node is behind the chain');
const asOfBlock = z.number().int().describe('The chain block this answer reflects');
const asOfBlockHash = z
  .string()
  .nullable()
  .describe('The hash of as_of_block: check the answer against any RPC of that chain (arkivector verify)');
const attributeValue = z.object({
  type: z.enum(ATTRIBUTE_TYPES),
  value: z.union([z.string(), z.number(), z.boolean()]),
});

export const collectionSchema = z.object({
  name: z.string(),
  column: z.string(),
  dim: z.number().int(),
  metric: z.enum(METRICS),
  index: z.object({
    type: z.literal('hnsw'),
    opclass: z.string(),
    m: z.number().int(),
    ef_construction: z.number().int(),
    ef_search: z.number().int(),
  }),
  attributes: z.record(z.string(), z.string()),
  open: z.boolean(),
  owner: z.string(),
  writers: z.array(z.string()),
  description: z.string().optional(),
  embedder: z.record(z.string(), z.unknown()).optional(),
  definition_key: z.string(),
  conflicts: z.array(z.string()),
  /** This node saw the name pass to another owner (a lapsed definition replaced, or ChangeOwner). */
  owner_change: z.object({ previous_owner: z.string(), at_block: z.number().int() }).optional(),
  stats: z.object({ live_entities: z.number().int(), rejected: z.number().int(), shadowed: z.number().int() }),
  sync_state: syncState,
  as_of_block: asOfBlock,
});
export type Collection = z.infer<typeof collectionSchema>;

const expiresAtBlockSchema = z
  .union([z.number().int(), z.literal('never')])
  .describe('The block from which the entity is gone; "never": kept until deleted');

export const entitySchema = z.object({
  key: z.string(),
  id: z.string(),
  owner: z.string(),
  creator: z.string().optional(),
  expires_at_block: expiresAtBlockSchema,
  attributes: z.record(z.string(), attributeValue),
  document: z.string().optional(),
});

export const searchResultSchema = z.object({
  key: z.string(),
  id: z.string(),
  distance: z.number().optional(),
  score: z.number(),
  expires_at_block: expiresAtBlockSchema,
  attributes: z.record(z.string(), attributeValue),
  document: z.string().optional(),
});

export const listResultShape = {
  collections: z.array(collectionSchema),
  as_of_block: asOfBlock,
  as_of_block_hash: asOfBlockHash,
  sync_state: syncState,
  total: z.number().int().describe('Collections this node indexes at as_of_block'),
  next_cursor: z.string().nullable().describe('Pass as cursor for the next page; null on the last page'),
};
export const searchResultShape = {
  as_of_block: asOfBlock,
  as_of_block_hash: asOfBlockHash,
  sync_state: syncState,
  open_collection: z
    .boolean()
    .describe('Whether any writer may add to this collection (true) or only its owner and writers'),
  search_mode: z.enum(SEARCH_MODES).describe('exact scan or HNSW graph search'),
  mode: z.enum(['vector', 'semantic', 'keyword', 'hybrid']),
  results: z.array(searchResultSchema),
  semantic_missing: z
    .string()
    .optional()
    .describe('Hybrid: why only the keyword half answered (the embedder is down, or gives another dimension)'),
};
export const getResultShape = {
  as_of_block: asOfBlock,
  as_of_block_hash: asOfBlockHash,
  sync_state: syncState,
  entity: entitySchema,
};
export const countResultShape = {
  as_of_block: asOfBlock,
  as_of_block_hash: asOfBlockHash,
  sync_state: syncState,
  count: z.number().int(),
};

export type SearchResult = z.infer<z.ZodObject<typeof searchResultShape>>;
export type GetResult = z.infer<z.ZodObject<typeof getResultShape>>;
export type CountResult = z.infer<z.ZodObject<typeof countResultShape>>;
export type ListCollectionsResult = z.infer<z.ZodObject<typeof listResultShape>>;

const waitArg = z
  .enum(['indexed', 'receipt', 'none'])
  .default('indexed')
  .describe(
    'indexed (default): return once this node can search the write; receipt: once mined, with the keys the chain minted; none: once the node accepted the transaction (block_number null; on the DB-chain the keys of new entities are predictions, which another process signing with the same key can take first)',
  );

export const upsertEntitySchema = z.object({
  id: z
    .string()
    .min(ID_MIN_BYTES)
    .max(ID_MAX_BYTES)
    .describe('Entity id, unique in the collection; an existing id of this signer is updated'),
  vector: z
    .array(z.number())
    .min(1)
    .max(DIM_MAX)
    .optional()
    .describe("Embedding with the collection's dimension; omit it to have this node's embedder embed the document"),
  document: z
    .string()
    .max(DOCUMENT_MAX_CHARS)
    .optional()
    .describe(
      'Text stored with the vector (searchable with mode keyword); alone (no vector), it is embedded by this node',
    ),
  attributes: z
    .record(z.string(), z.union([z.string(), z.number(), z.boolean()]))
    .optional()
    .describe("Values of the collection's declared attributes"),
  ttl: ttlSchema
    .optional()
    .describe(
      'Lifetime, e.g. {"days": 30}; default: the collection\'s default_ttl, else kept until deleted (permanent on the DB-chain, 100 years on v1; it stays on chain until arkivector_delete)',
    ),
});

export const upsertArgs = {
  collection: collectionArg,
  entities: z
    .array(upsertEntitySchema)
    .min(1)
    .max(UPSERT_MAX_ENTITIES)
    .describe(`1-${UPSERT_MAX_ENTITIES} entities, written in one transaction`),
  wait: waitArg,
};
export const upsertSchema = z.object(upsertArgs);
export type UpsertParameters = z.output<typeof upsertSchema>;

export const deleteArgs = {
  collection: collectionArg,
  refs: z
    .array(z.string().min(1).max(REF_MAX_CHARS))
    .min(1)
    .max(UPSERT_MAX_ENTITIES)
    .optional()
    .describe('Ids or 0x keys of entities this signer owns (or give where/filter instead)'),
  where: whereArg.describe(
    "Delete every entity passing this Arkiv filter that this signer owns, e.g. topic = str('trip'); instead of refs",
  ),
  filter: filterArg.describe('JSON filter of the entities to delete (ANDed with where); instead of refs'),
  dry_run: z.boolean().default(true).describe('true (default): only report what would be deleted'),
  wait: waitArg,
};
export const deleteSchema = z.object(deleteArgs).superRefine((args, issues) => {
  const byFilter = args.where !== undefined || args.filter !== undefined;
  if (byFilter === (args.refs !== undefined))
    issues.addIssue({
      code: 'custom',
      path: byFilter ? ['refs'] : [],
      message: byFilter
        ? 'give refs or where/filter, not both'
        : 'give refs (ids or keys) or where/filter (the entities to delete)',
    });
});

export const createCollectionArgs = {
  name: z
    .string()
    .min(1)
    .max(COLLECTION_NAME_MAX_CHARS)
    .describe(`Collection name: 1-${COLLECTION_NAME_MAX_CHARS} characters of a-z, 0-9, ".", "_", "-"`),
  dim: z
    .number()
    .int()
    .optional()
    .describe(
      `Vector dimension, 1-${DIM_MAX}; omit it on a node with an embedder to use the embedder's dimension (the collection then records the embedder and takes text)`,
    ),
  metric: z.enum(METRICS).describe('Distance: cosine (usual for text embeddings), l2 or ip'),
  attributes: z
    .record(z.string(), z.string())
    .optional()
    .describe('Filterable attributes and their types (str, i32, uint, f32, bool), e.g. {"topic": "str"}'),
  open: z.boolean().optional().describe('true: any signer may add entities; false (default): owner and writers only'),
  writers: z.array(z.string()).optional().describe('Addresses (0x...) that may write besides the owner'),
  index: z.record(z.string(), z.unknown()).optional().describe('HNSW parameters {m, ef_construction, ef_search}'),
  default_ttl: z
    .record(z.string(), z.unknown())
    .optional()
    .describe('Lifetime of entities written without a ttl, e.g. {"days": 30}; default: kept until deleted'),
  description: z.string().optional().describe('What the collection holds'),
  embedder: z
    .record(z.string(), z.unknown())
    .optional()
    .describe("Embedding model recorded in the definition, {model, dim}; default: this node's embedder, if any"),
  ttl: ttlSchema.optional().describe('Lifetime of the definition itself; default: kept until deleted'),
  wait: waitArg,
};
export const createCollectionSchema = z.object(createCollectionArgs);

const writeOutcome = {
  tx_hashes: z.array(z.string()),
  block_number: z
    .number()
    .int()
    .nullable()
    .describe('Block of the transaction; pass it as min_block to read the write from any node'),
};
export const upsertResultShape = {
  results: z.array(
    z.object({
      id: z.string(),
      key: z.string(),
      op: z.enum(['create', 'update']),
      expires_at_block: expiresAtBlockSchema
        .nullable()
        .describe(
          'The block from which the entity is gone; "never": kept until deleted; null: not known before the block (wait none)',
        ),
    }),
  ),
  ...writeOutcome,
};
export const deleteResultShape = {
  dry_run: z.boolean(),
  results: z.array(z.object({ id: z.string(), key: z.string(), op: z.literal('delete') })),
  ...writeOutcome,
  transactions: z
    .number()
    .int()
    .optional()
    .describe('Transactions this delete sent (dry run: would send); deletes by filter are batched'),
  matched: z.number().int().optional().describe('Delete by filter: live entities passing the filter'),
  skipped: z
    .array(z.object({ reason: z.enum(['not_owner']), count: z.number().int() }))
    .optional()
    .describe('Delete by filter: matching entities left alone, by reason (not_owner: another writer owns it)'),
  remaining: z
    .number()
    .int()
    .optional()
    .describe('Delete by filter: entities of this signer beyond the per-call maximum, not deleted: call again'),
  as_of_block: asOfBlock.optional(),
};
export const createCollectionResultShape = {
  name: z.string(),
  key: z.string().describe('Entity key of the definition'),
  created: z.boolean().describe('false: an identical collection of this signer already existed (nothing written)'),
  dim: z.number().int(),
  embedder: z.record(z.string(), z.unknown()).optional().describe('The embedding model recorded, if any'),
  ...writeOutcome,
};
export type UpsertResult = z.infer<z.ZodObject<typeof upsertResultShape>>;
export type DeleteResult = z.infer<z.ZodObject<typeof deleteResultShape>>;
export type CreateCollectionResult = z.infer<z.ZodObject<typeof createCollectionResultShape>>;

const orderArg = z
  .enum(['newest', 'oldest'])
  .default('newest')
  .describe('newest (default): last modified first; oldest: first modified first (ties: entity key)');

export const listEntitiesArgs = {
  collection: collectionArg,
  where: whereArg,
  filter: filterArg,
  limit: z
    .number()
    .int()
    .min(LIST_LIMIT_MIN)
    .max(LIST_LIMIT_MAX)
    .default(LIST_LIMIT_DEFAULT)
    .describe(`Entities per page, ${LIST_LIMIT_MIN}-${LIST_LIMIT_MAX} (default ${LIST_LIMIT_DEFAULT})`),
  cursor: z
    .string()
    .min(1)
    .max(CURSOR_MAX_CHARS)
    .optional()
    .describe(
      'next_cursor of the previous page (repeat the same where, filter and order); the page answers from the same block',
    ),
  order: orderArg,
  include_document: z.boolean().default(false).describe("Return each entity's document"),
  min_block: minBlockArg,
};
export const listEntitiesSchema = z.object(listEntitiesArgs);
export type ListEntitiesParameters = z.input<typeof listEntitiesSchema>;

export const listEntitiesResultShape = {
  as_of_block: asOfBlock,
  as_of_block_hash: asOfBlockHash,
  sync_state: syncState,
  order: z.enum(['newest', 'oldest']),
  total: z.number().int().describe('Entities passing the filter at as_of_block'),
  entities: z.array(
    entitySchema.extend({
      last_modified_block: z.number().int().describe('Block in which the entity was last created or updated'),
    }),
  ),
  next_cursor: z.string().nullable().describe('Pass as cursor for the next page; null on the last page'),
};
export type ListEntitiesResult = z.infer<z.ZodObject<typeof listEntitiesResultShape>>;
