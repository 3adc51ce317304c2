// Vector entity of schema v1 (ARCHITECTURE.md §8.2): RawEntity (as read from the chain) -> VectorRecord, and
// the inverse for writes. Used by the indexer (decodeVectorEntity on every entity it sees: hostile
// input, never throws) and by upsert (encodeVectorEntity builds `createEntity`/`updateEntity` arguments).
//
// Undeclared user attributes are ignored when decoding: the definition may have gained attributes this
// node has not seen yet, and other tools may tag entities. They are refused when encoding, because
// arkivector only writes what the definition declares.

import { CodecError, DimensionMismatchError, InvalidArgumentError } from '../errors.ts';
import { ATTR_COLLECTION, ATTR_ID, ATTR_TYPE, ENTITY_TYPE_VECTOR, VECTOR_CONTENT_TYPE } from '../limits.ts';
import { ATTRIBUTE_KIND, decodeAttribute, encodeAttribute, type AttributeValue } from './attributes.ts';
import { collectionNameSchema, vectorIdSchema, type CollectionDefinition } from './definition.ts';
import { decodeVectorPayload, encodeVectorPayload, type EncodeHalfOptions } from './halfvec.ts';

/** An entity as the chain layer hands it over, before any check. */
export type RawEntity = {
  key: string;
  owner: string;
  creator?: string | undefined;
  contentType: string | undefined;
  payload: Uint8Array | undefined;
  stringAttributes: ReadonlyMap<string, string>;
  numericAttributes: ReadonlyMap<string, bigint | number>;
  expiresAt: bigint | number;
};

/** A decoded vector entity. */
export type VectorRecord = {
  key: string;
  owner: string;
  creator: string | undefined;
  collection: string;
  id: string;
  /** Block at which the entity stops being live (live at B iff `expiresAt > B`). */
  expiresAt: bigint;
  dim: number;
  /** The binary16 values as float32. */
  vector: Float32Array;
  /** The raw binary16 element bytes (little-endian). */
  halfvec: Uint8Array;
  document: string;
  /** Declared attributes that are present; absent ones are missing keys. Null prototype. */
  attributes: Record<string, AttributeValue>;
};

/** The collection a vector entity is decoded against. */
export type CollectionRef = { name: string; definition: CollectionDefinition };

export type DecodeVectorEntityResult = { ok: true; record: VectorRecord } | { ok: false; reason: string };

/** One attribute in the shape `@arkiv-network/sdk` `createEntity` takes. */
export type EntityAttribute<V extends string | number = string | number> = { key: string; value: V };

/** What encodeVectorEntity returns: `createEntity` arguments minus `expiresIn`. */
export type EncodedVectorEntity = {
  payload: Uint8Array;
  contentType: typeof VECTOR_CONTENT_TYPE;
  stringAttributes: EntityAttribute<string>[];
  numericAttributes: EntityAttribute<number>[];
  /** `stringAttributes` then `numericAttributes`, ready for `createEntity({ attributes })`. */
  attributes: EntityAttribute[];
};

export type EncodeVectorEntityParameters = {
  collection: string;
  id: string;
  vector: number[] | Float32Array;
  document?: string;
  /** Declared attributes only; `undefined` values are left out. */
  attributes?: Record<string, unknown>;
};

function reject(reason: string): DecodeVectorEntityResult {
  return { ok: false, reason };
}

/**
 * Decodes and validates a vector entity against its collection. Never throws: anything wrong with the
 * entity becomes `{ ok: false, reason }` (the indexer counts it in `stats.rejected`).
 * @param raw the entity as read from the chain
 * @param collection `{ name, definition }` of the collection it claims to belong to
 * @returns `{ ok: true, record }` or `{ ok: false, reason }`
 * @example decodeVectorEntity(raw, { name: 'notes', definition }) // { ok: true, record: { id: 'cat', … } }
 */
export function decodeVectorEntity(raw: RawEntity, collection: CollectionRef): DecodeVectorEntityResult {
  try {
    return decodeUnsafe(raw, collection);
  } catch (err) {
    // Last guard for shapes the types do not allow (hostile or buggy callers).
    return reject(err instanceof CodecError ? err.shortMessage : 'entity could not be decoded');
  }
}

function decodeUnsafe(raw: RawEntity, { name, definition }: CollectionRef): DecodeVectorEntityResult {
  if (raw.contentType !== VECTOR_CONTENT_TYPE) {
    return reject(`content type is ${JSON.stringify(raw.contentType ?? null)}, expected ${VECTOR_CONTENT_TYPE}`);
  }
  const strings = raw.stringAttributes;
  const numbers = raw.numericAttributes;
  const type = strings.get(ATTR_TYPE);
  if (type !== ENTITY_TYPE_VECTOR)
    return reject(`${ATTR_TYPE} is ${JSON.stringify(type ?? null)}, expected "${ENTITY_TYPE_VECTOR}"`);
  const coll = strings.get(ATTR_COLLECTION);
  if (coll !== name)
    return reject(`${ATTR_COLLECTION} is ${JSON.stringify(coll ?? null)}, expected ${JSON.stringify(name)}`);
  const id = strings.get(ATTR_ID);
  const idCheck = vectorIdSchema.safeParse(id);
  if (!idCheck.success) return reject(`${ATTR_ID}: ${idCheck.error.issues[0]?.message ?? 'invalid id'}`);

  let expiresAt: bigint;
  if (typeof raw.expiresAt === 'bigint') expiresAt = raw.expiresAt;
  else if (typeof raw.expiresAt === 'number' && Number.isSafeInteger(raw.expiresAt)) expiresAt = BigInt(raw.expiresAt);
  else return reject('expiresAt is not an integer');
  if (expiresAt < 0n) return reject('expiresAt is negative');

  if (!(raw.payload instanceof Uint8Array)) return reject('payload is missing');
  let payload;
  try {
    payload = decodeVectorPayload(raw.payload, definition.dim);
  } catch (err) {
    if (err instanceof CodecError) return reject(`payload: ${err.shortMessage}`);
    throw err;
  }

  const attributes: Record<string, AttributeValue> = Object.create(null);
  for (const [attr, attrType] of Object.entries(definition.attributes)) {
    const kind = ATTRIBUTE_KIND[attrType];
    const s = strings.get(attr);
    const n = numbers.get(attr);
    const own = kind === 'string' ? s : n;
    const other = kind === 'string' ? n : s;
    if (other !== undefined)
      return reject(
        `attribute ${attr} is declared ${attrType} but stored as ${kind === 'string' ? 'numeric' : 'string'}`,
      );
    if (own === undefined) continue;
    try {
      attributes[attr] =
        kind === 'string'
          ? decodeAttribute(attrType, { kind: 'string', value: own as string })
          : decodeAttribute(attrType, { kind: 'numeric', value: own as number | bigint });
    } catch (err) {
      if (err instanceof CodecError) return reject(`attribute ${attr}: ${err.shortMessage}`);
      throw err;
    }
  }

  return {
    ok: true,
    record: {
      key: raw.key,
      owner: raw.owner,
      creator: raw.creator,
      collection: name,
      id: idCheck.data,
      expiresAt,
      dim: payload.dim,
      vector: payload.vector,
      halfvec: payload.halfvec,
      document: payload.document,
      attributes,
    },
  };
}

/**
 * Builds the payload, content type and attributes of a vector entity, validating everything first.
 * @param params `{ collection, id, vector, document, attributes }`
 * @param definition the collection's definition (dim and declared attribute types)
 * @param options `overflow` for binary16 conversion: `error` (default) or `clamp`
 * @returns `{ payload, contentType, stringAttributes, numericAttributes, attributes }`
 * @throws InvalidArgumentError for a bad name, id, element, document or attribute; DimensionMismatchError for a wrong vector length
 * @example encodeVectorEntity({ collection: 'notes', id: 'cat', vector: [1, 0, 0, 0], document: 'a cat', attributes: { stars: 5 } }, definition)
 */
export function encodeVectorEntity(
  { collection, id, vector, document = '', attributes = {} }: EncodeVectorEntityParameters,
  definition: CollectionDefinition,
  options: EncodeHalfOptions = {},
): EncodedVectorEntity {
  const nameCheck = collectionNameSchema.safeParse(collection);
  if (!nameCheck.success)
    throw new InvalidArgumentError(nameCheck.error.issues[0]?.message ?? 'invalid collection name');
  const idCheck = vectorIdSchema.safeParse(id);
  if (!idCheck.success) throw new InvalidArgumentError(idCheck.error.issues[0]?.message ?? 'invalid id');
  if (!Array.isArray(vector) && !(vector instanceof Float32Array))
    throw new InvalidArgumentError('vector must be an array of numbers');
  if (vector.length !== definition.dim)
    throw new DimensionMismatchError({ expected: definition.dim, got: vector.length });

  const stringAttributes: EntityAttribute<string>[] = [
    { key: ATTR_TYPE, value: ENTITY_TYPE_VECTOR },
    { key: ATTR_COLLECTION, value: collection },
    { key: ATTR_ID, value: id },
  ];
  const numericAttributes: EntityAttribute<number>[] = [];
  for (const attr of Object.keys(attributes).sort()) {
    const value = attributes[attr];
    if (value === undefined) continue;
    const attrType = Object.hasOwn(definition.attributes, attr) ? definition.attributes[attr] : undefined;
    if (attrType === undefined)
      throw new InvalidArgumentError(`attribute ${attr} is not declared by collection ${collection}`);
    let stored;
    try {
      stored = encodeAttribute(attrType, value);
    } catch (err) {
      if (err instanceof InvalidArgumentError) throw new InvalidArgumentError(`attribute ${attr}: ${err.shortMessage}`);
      throw err;
    }
    if (stored.kind === 'string') stringAttributes.push({ key: attr, value: stored.value });
    else numericAttributes.push({ key: attr, value: stored.value });
  }

  const payload = encodeVectorPayload({ vector, document }, options);
  return {
    payload,
    contentType: VECTOR_CONTENT_TYPE,
    stringAttributes,
    numericAttributes,
    attributes: [...stringAttributes, ...numericAttributes],
  };
}
