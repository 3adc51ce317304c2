// Public surface of src/collections/: schema v1 limits, codecs and errors. The indexer, the engine,
// the service and the tools import from here, never from the files behind it.

export {
  ATTR_COLLECTION,
  ATTR_ID,
  ATTR_TYPE,
  ATTRIBUTE_NAME_REGEX,
  BLOCK_TIME_SECONDS,
  COLLECTION_CONTENT_TYPE,
  COLLECTION_NAME_MAX_CHARS,
  COLLECTION_NAME_REGEX,
  DEFINITION_ATTRIBUTES_MAX,
  DEFINITION_DESCRIPTION_MAX_BYTES,
  DEFINITION_EMBEDDER_MAX_BYTES,
  DEFINITION_PAYLOAD_MAX_BYTES,
  DEFINITION_WRITERS_MAX,
  DEFINITIONS_MAX,
  DEFINITIONS_PER_CREATOR_MAX,
  DIM_MAX,
  DIM_MIN,
  ENTITY_DECODED_MAX_BYTES,
  TX_CALLDATA_MAX_BYTES,
  TX_OPERATIONS_MAX,
  ENTITY_TYPE_COLLECTION,
  ENTITY_TYPE_VECTOR,
  HALF_MAX,
  HNSW_DEFAULT_EF_CONSTRUCTION,
  HNSW_DEFAULT_EF_SEARCH,
  HNSW_DEFAULT_M,
  HNSW_MAX_EF_CONSTRUCTION,
  HNSW_MAX_EF_SEARCH,
  HNSW_MAX_M,
  HNSW_MIN_EF_CONSTRUCTION,
  HNSW_MIN_EF_SEARCH,
  HNSW_MIN_M,
  I32_MAX,
  I32_MIN,
  I32_OFFSET,
  ENTITY_KEY_FORM_REGEX,
  ID_MAX_BYTES,
  ID_MIN_BYTES,
  RESERVED_PREFIX,
  STR_ATTRIBUTE_MAX_BYTES,
  UINT_ATTRIBUTE_MAX,
  VECTOR_CONTENT_TYPE,
  VECTOR_ELEMENT_BINARY16,
  VECTOR_PAYLOAD_FORMAT,
  VECTOR_PAYLOAD_HEADER_BYTES,
} from './limits.ts';

export { CodecError, DimensionMismatchError, InvalidArgumentError } from './errors.ts';
export type { CodecErrorCode, CodecIssue } from './errors.ts';

export {
  decodeHalfvec,
  decodeVectorPayload,
  encodeHalfvec,
  encodeVectorPayload,
  floatToHalfBits,
  HALF_TO_FLOAT32,
  halfBitsToFloat,
  isFiniteHalf,
} from './codecs/halfvec.ts';
export type { EncodeHalfOptions, HalfOverflow, VectorPayload } from './codecs/halfvec.ts';

export {
  ATTRIBUTE_KIND,
  ATTRIBUTE_TYPES,
  decodeAttribute,
  encodeAttribute,
  isAttributeType,
} from './codecs/attributes.ts';
export type { AttributeType, AttributeValue, StoredAttribute } from './codecs/attributes.ts';

export { TTL_UNITS, ttlToBlocks } from './codecs/ttl.ts';
export type { Ttl, TtlUnit } from './codecs/ttl.ts';

export {
  attributeNameSchema,
  checkDefinitionUpdate,
  collectionDefinitionSchema,
  collectionNameSchema,
  countsInCollection,
  encodeCollectionDefinition,
  encodeCollectionEntity,
  indexParamsSchema,
  InvalidCollectionDefinitionError,
  isWriterAllowed,
  METRICS,
  parseCollectionDefinition,
  ttlSchema,
  validateCollectionDefinition,
  vectorIdSchema,
} from './codecs/definition.ts';
export type {
  CollectionDefinition,
  CollectionDefinitionInput,
  DefinitionViolation,
  IndexParams,
  Metric,
} from './codecs/definition.ts';

export { decodeVectorEntity, encodeVectorEntity } from './codecs/vectorEntity.ts';
export type {
  CollectionRef,
  DecodeVectorEntityResult,
  EncodedVectorEntity,
  EncodeVectorEntityParameters,
  EntityAttribute,
  RawEntity,
  VectorRecord,
} from './codecs/vectorEntity.ts';

export { isWellFormed, utf8ByteLength, utf8Decode, utf8Encode } from './codecs/utf8.ts';
