// Tests src/collections/index.ts: the hand-picked public surface and the declared limits.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as collections from '../../src/collections/index.ts';

test('exports: the public surface changes only on purpose', () => {
  assert.deepEqual(Object.keys(collections).sort(), [
    'ATTRIBUTE_KIND',
    'ATTRIBUTE_NAME_REGEX',
    'ATTRIBUTE_TYPES',
    'ATTR_COLLECTION',
    'ATTR_ID',
    'ATTR_TYPE',
    'BLOCK_TIME_SECONDS',
    'COLLECTION_CONTENT_TYPE',
    'COLLECTION_NAME_MAX_CHARS',
    'COLLECTION_NAME_REGEX',
    'CodecError',
    'DEFINITIONS_MAX',
    'DEFINITIONS_PER_CREATOR_MAX',
    'DEFINITION_ATTRIBUTES_MAX',
    'DEFINITION_DESCRIPTION_MAX_BYTES',
    'DEFINITION_EMBEDDER_MAX_BYTES',
    'DEFINITION_PAYLOAD_MAX_BYTES',
    'DEFINITION_WRITERS_MAX',
    'DIM_MAX',
    'DIM_MIN',
    'DimensionMismatchError',
    'ENTITY_DECODED_MAX_BYTES',
    'ENTITY_KEY_FORM_REGEX',
    'ENTITY_TYPE_COLLECTION',
    'ENTITY_TYPE_VECTOR',
    'HALF_MAX',
    'HALF_TO_FLOAT32',
    'HNSW_DEFAULT_EF_CONSTRUCTION',
    'HNSW_DEFAULT_EF_SEARCH',
    'HNSW_DEFAULT_M',
    'HNSW_MAX_EF_CONSTRUCTION',
    'HNSW_MAX_EF_SEARCH',
    'HNSW_MAX_M',
    'HNSW_MIN_EF_CONSTRUCTION',
    'HNSW_MIN_EF_SEARCH',
    'HNSW_MIN_M',
    'I32_MAX',
    'I32_MIN',
    'I32_OFFSET',
    'ID_MAX_BYTES',
    'ID_MIN_BYTES',
    'InvalidArgumentError',
    'InvalidCollectionDefinitionError',
    'METRICS',
    'RESERVED_PREFIX',
    'STR_ATTRIBUTE_MAX_BYTES',
    'TTL_UNITS',
    'TX_CALLDATA_MAX_BYTES',
    'TX_OPERATIONS_MAX',
    'UINT_ATTRIBUTE_MAX',
    'VECTOR_CONTENT_TYPE',
    'VECTOR_ELEMENT_BINARY16',
    'VECTOR_PAYLOAD_FORMAT',
    'VECTOR_PAYLOAD_HEADER_BYTES',
    'attributeNameSchema',
    'checkDefinitionUpdate',
    'collectionDefinitionSchema',
    'collectionNameSchema',
    'countsInCollection',
    'decodeAttribute',
    'decodeHalfvec',
    'decodeVectorEntity',
    'decodeVectorPayload',
    'encodeAttribute',
    'encodeCollectionDefinition',
    'encodeCollectionEntity',
    'encodeHalfvec',
    'encodeVectorEntity',
    'encodeVectorPayload',
    'floatToHalfBits',
    'halfBitsToFloat',
    'indexParamsSchema',
    'isAttributeType',
    'isFiniteHalf',
    'isWellFormed',
    'isWriterAllowed',
    'parseCollectionDefinition',
    'ttlSchema',
    'ttlToBlocks',
    'utf8ByteLength',
    'utf8Decode',
    'utf8Encode',
    'validateCollectionDefinition',
    'vectorIdSchema',
  ]);
});

test('default: limits of DESIGN §4 and §5', () => {
  assert.equal(collections.DIM_MIN, 1);
  assert.equal(collections.DIM_MAX, 4000);
  assert.equal(collections.HNSW_DEFAULT_M, 16);
  assert.equal(collections.HNSW_DEFAULT_EF_CONSTRUCTION, 64);
  assert.equal(collections.HNSW_DEFAULT_EF_SEARCH, 40);
  assert.equal(collections.ID_MAX_BYTES, 256);
  assert.equal(collections.STR_ATTRIBUTE_MAX_BYTES, 1024);
  assert.equal(collections.BLOCK_TIME_SECONDS, 2);
  assert.equal(collections.RESERVED_PREFIX, 'arkivector_');
  assert.equal(collections.UINT_ATTRIBUTE_MAX, 2 ** 53 - 1);
  assert.equal(collections.COLLECTION_CONTENT_TYPE, 'application/vnd.arkivector.collection.v1+json');
  assert.equal(collections.VECTOR_CONTENT_TYPE, 'application/vnd.arkivector.vector.v1');
  for (const [min, def, max] of [
    [collections.HNSW_MIN_M, collections.HNSW_DEFAULT_M, collections.HNSW_MAX_M],
    [
      collections.HNSW_MIN_EF_CONSTRUCTION,
      collections.HNSW_DEFAULT_EF_CONSTRUCTION,
      collections.HNSW_MAX_EF_CONSTRUCTION,
    ],
    [collections.HNSW_MIN_EF_SEARCH, collections.HNSW_DEFAULT_EF_SEARCH, collections.HNSW_MAX_EF_SEARCH],
  ] as const) {
    assert.ok(min <= def && def <= max);
  }
  assert.ok(collections.HNSW_DEFAULT_EF_CONSTRUCTION >= 2 * collections.HNSW_DEFAULT_M);
});
