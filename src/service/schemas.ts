// Zod schemas of the operations' arguments and answers, shared by the MCP tools (input/output schemas)
// and the REST routes (request validation), so both surfaces accept and return exactly the same shapes.
import { z } from 'zod';
import { DIM_MAX } from '../collections/index.ts';
import { REF_MAX_CHARS, SEARCH_K_DEFAULT, SEARCH_K_MAX, SEARCH_K_MIN, TEXT_MAX_CHARS, WHERE_MAX_CHARS } from './limits.ts';

export const collectionArg = z.string().min(1).max(63).describe('Collection name, e.g. "notes"');
export const minBlockArg = z
  .number()
  .int()
  .min(0)
  .optional()
  .describe('Wait (up to the node\'s --min-block-timeout) until this block is indexed; pass the block_number of a write to read your own write');
export const whereArg = z
  .string()
  .max(WHERE_MAX_CHARS)
  .optional()
  .describe('Arkiv filter over the collection\'s attributes, e.g. topic = str(\'pets\') && stars >= 4; also $owner, $creator, $key');
export const filterArg = z
  .record(z.string(), z.unknown())
  .optional()
  .describe('JSON filter, e.g. {"gte": {"stars": 4}}; {"and"|"or": [...]}, {"not": ...}, {"in": {attr: [...]}}, {"glob": {attr: "pat*"}}; ANDed with where');

export const searchArgs = {
  collection: collectionArg,
  vector: z.array(z.number()).min(1).max(DIM_MAX).optional().describe('Query embedding with the collection\'s dimension'),
  text: z.string().min(1).max(TEXT_MAX_CHARS).optional().describe('Natural-language query; needs an embedder unless mode is "keyword"'),
  mode: z.enum(['vector', 'semantic', 'keyword', 'hybrid']).optional().describe('vector (default with vector), semantic (embed text), keyword (BM25 over documents), hybrid (RRF of both)'),
  k: z.number().int().min(SEARCH_K_MIN).max(SEARCH_K_MAX).default(SEARCH_K_DEFAULT).describe(`Number of results, ${SEARCH_K_MIN}-${SEARCH_K_MAX} (default ${SEARCH_K_DEFAULT})`),
  where: whereArg,
  filter: filterArg,
  include_document: z.boolean().default(false).describe('Return each result\'s document'),
  min_block: minBlockArg,
};
export const searchSchema = z.object(searchArgs);
export type SearchParameters = z.input<typeof searchSchema>;

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

export const listArgs = { min_block: minBlockArg };
export const listSchema = z.object(listArgs);

const syncState = z.enum(['starting', 'catching_up', 'live', 'stalled']).describe('How far this node is behind the chain');
const asOfBlock = z.number().int().describe('The chain block this answer reflects');
const attributeValue = z.object({ type: z.enum(['str', 'i32', 'uint', 'f32', 'bool']), value: z.union([z.string(), z.number(), z.boolean()]) });

export const collectionSchema = z.object({
  name: z.string(),
  column: z.string(),
  dim: z.number().int(),
  metric: z.enum(['cosine', 'l2', 'ip']),
  index: z.object({ type: z.literal('hnsw'), opclass: z.string(), m: z.number().int(), ef_construction: z.number().int(), ef_search: z.number().int() }),
  attributes: z.record(z.string(), z.string()),
  open: z.boolean(),
  owner: z.string(),
  writers: z.array(z.string()),
  description: z.string().optional(),
  embedder: z.record(z.string(), z.unknown()).optional(),
  definition_key: z.string(),
  conflicts: z.array(z.string()),
  stats: z.object({ live_entities: z.number().int(), rejected: z.number().int(), shadowed: z.number().int() }),
  sync_state: syncState,
  as_of_block: asOfBlock,
});
export type Collection = z.infer<typeof collectionSchema>;

export const entitySchema = z.object({
  key: z.string(),
  id: z.string(),
  owner: z.string(),
  creator: z.string().optional(),
  expires_at_block: z.number().int(),
  attributes: z.record(z.string(), attributeValue),
  document: z.string().optional(),
});

export const searchResultSchema = z.object({
  key: z.string(),
  id: z.string(),
  distance: z.number().optional(),
  score: z.number(),
  expires_at_block: z.number().int(),
  attributes: z.record(z.string(), attributeValue),
  document: z.string().optional(),
});

export const listResultShape = { collections: z.array(collectionSchema), as_of_block: asOfBlock, sync_state: syncState };
export const searchResultShape = {
  as_of_block: asOfBlock,
  sync_state: syncState,
  open_collection: z.boolean().describe('Whether any writer may add to this collection (true) or only its owner and writers'),
  search_mode: z.enum(['exact', 'hnsw']).describe('exact scan or HNSW graph search'),
  mode: z.enum(['vector', 'semantic', 'keyword', 'hybrid']),
  results: z.array(searchResultSchema),
};
export const getResultShape = { as_of_block: asOfBlock, sync_state: syncState, entity: entitySchema };
export const countResultShape = { as_of_block: asOfBlock, sync_state: syncState, count: z.number().int() };

export type SearchResult = z.infer<z.ZodObject<typeof searchResultShape>>;
export type GetResult = z.infer<z.ZodObject<typeof getResultShape>>;
export type CountResult = z.infer<z.ZodObject<typeof countResultShape>>;
export type ListCollectionsResult = z.infer<z.ZodObject<typeof listResultShape>>;
