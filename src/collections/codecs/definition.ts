// Collection definition entity of schema v1 (ARCHITECTURE.md §8.1): zod schemas, the payload codec pair,
// the update rules, and the name/id schemas. Used by the indexer (parse definitions found on chain),
// the service (create collection, validate ids and names) and the tools/REST schemas.
//
// Unknown keys: tolerated and dropped at the top level and inside `index`, so that a v1 reader accepts
// definitions written by a later minor version; `embedder` keeps its extra keys (it is free-form
// metadata about the model); `default_ttl` and `attributes` are strict because a key there carries meaning.

import { z } from 'zod';
import { InvalidArgumentError, type CodecIssue } from '../errors.ts';
import {
  ATTRIBUTE_NAME_REGEX,
  COLLECTION_NAME_REGEX,
  DEFINITION_ATTRIBUTES_MAX,
  DEFINITION_DESCRIPTION_MAX_BYTES,
  DEFINITION_EMBEDDER_MAX_BYTES,
  DEFINITION_PAYLOAD_MAX_BYTES,
  DEFINITION_WRITERS_MAX,
  DIM_MAX,
  DIM_MIN,
  HNSW_DEFAULT_EF_CONSTRUCTION,
  HNSW_DEFAULT_EF_SEARCH,
  HNSW_DEFAULT_M,
  HNSW_MAX_EF_CONSTRUCTION,
  HNSW_MAX_EF_SEARCH,
  HNSW_MAX_M,
  HNSW_MIN_EF_CONSTRUCTION,
  HNSW_MIN_EF_SEARCH,
  HNSW_MIN_M,
  ENTITY_KEY_FORM_REGEX,
  ID_MAX_BYTES,
  ID_MIN_BYTES,
  RESERVED_PREFIX,
  ATTR_COLLECTION,
  ATTR_TYPE,
  COLLECTION_CONTENT_TYPE,
  ENTITY_TYPE_COLLECTION,
} from '../limits.ts';
import { ATTRIBUTE_TYPES, isAttributeType, type AttributeType } from './attributes.ts';
import { TTL_UNITS, type Ttl } from './ttl.ts';
import { isWellFormed, utf8ByteLength, utf8Decode, utf8Encode } from './utf8.ts';

/** Distance metrics, named as in pgvector. */
export const METRICS = ['cosine', 'l2', 'ip'] as const;
export type Metric = (typeof METRICS)[number];

/** HNSW parameters, named as in pgvector. */
export type IndexParams = { m: number; ef_construction: number; ef_search: number };

/** A parsed, normalized collection definition (defaults applied, writers lowercased). */
export type CollectionDefinition = {
  dim: number;
  metric: Metric;
  attributes: Record<string, AttributeType>;
  open: boolean;
  writers: `0x${string}`[];
  index: IndexParams;
  default_ttl?: Ttl;
  description?: string;
  embedder?: { model: string; [key: string]: unknown };
};

/** One rule a definition update breaks. */
export type DefinitionViolation = { field: string; message: string };

/** Thrown by parseCollectionDefinition and encodeCollectionDefinition; `errors` lists every issue. */
export class InvalidCollectionDefinitionError extends InvalidArgumentError {
  override name = 'InvalidCollectionDefinitionError';
}

const intBetween = (field: string, min: number, max: number) => {
  const error = `${field} must be an integer from ${min} to ${max}`;
  return z.number({ error }).int({ error }).min(min, { error }).max(max, { error });
};

/** A collection name: `^[a-z0-9][a-z0-9._-]{0,62}$`. */
export const collectionNameSchema = z
  .string({ error: 'collection name must be a string' })
  .regex(COLLECTION_NAME_REGEX, {
    error: 'collection name must be 1-63 characters of a-z, 0-9, ".", "_", "-", starting with a letter or digit',
  });

/** A user attribute name: `^[a-z_][a-z0-9_]{0,31}$`, not starting `arkivector_`, not `__proto__`. */
export const attributeNameSchema = z
  .string({ error: 'attribute name must be a string' })
  .regex(ATTRIBUTE_NAME_REGEX, {
    error: 'attribute name must be 1-32 characters of a-z, 0-9, "_", not starting with a digit',
  })
  .refine((s) => !s.startsWith(RESERVED_PREFIX), {
    error: `attribute names starting "${RESERVED_PREFIX}" are reserved`,
  })
  // Reserved because JS objects treat it as the prototype: it would vanish from parsed JSON.
  .refine((s) => s !== '__proto__', { error: 'attribute name "__proto__" is reserved' });

// Cc = C0 controls, DEL and C1 controls.
const CONTROL_CHAR = /\p{Cc}/u;

/** A vector id: 1–256 bytes of UTF-8, no control characters, not of the entity-key form. */
export const vectorIdSchema = z
  .string({ error: 'id must be a string' })
  .refine((s) => !ENTITY_KEY_FORM_REGEX.test(s), {
    error: 'id must not have the form of an entity key (0x + 64 hex digits): a ref of that form is a key',
  })
  .refine(isWellFormed, { error: 'id is not valid unicode (lone surrogate)' })
  .refine((s) => !CONTROL_CHAR.test(s), { error: 'id must not contain control characters' })
  .refine(
    (s) => {
      const n = utf8ByteLength(s);
      return n >= ID_MIN_BYTES && n <= ID_MAX_BYTES;
    },
    { error: `id must be ${ID_MIN_BYTES}-${ID_MAX_BYTES} utf-8 bytes` },
  );

const attributesSchema = z
  .custom<Record<string, unknown>>((v) => typeof v === 'object' && v !== null && !Array.isArray(v), {
    error: 'attributes must be an object of name to type',
  })
  .refine((obj) => Object.keys(obj).length <= DEFINITION_ATTRIBUTES_MAX, {
    error: `attributes must declare at most ${DEFINITION_ATTRIBUTES_MAX} attributes`,
    abort: true,
  })
  .superRefine((obj, ctx) => {
    // Object.keys sees an own "__proto__" key from JSON.parse, which z.record would drop silently.
    for (const key of Object.keys(obj)) {
      const name = attributeNameSchema.safeParse(key);
      if (!name.success) {
        ctx.addIssue({ code: 'custom', path: [key], message: name.error.issues[0]?.message ?? 'bad attribute name' });
      }
      if (!isAttributeType(obj[key])) {
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: `attribute type must be one of ${ATTRIBUTE_TYPES.join(', ')}`,
        });
      }
    }
  })
  .transform((obj) => {
    const out: Record<string, AttributeType> = {};
    for (const key of Object.keys(obj).sort()) out[key] = obj[key] as AttributeType;
    return out;
  });

const positiveInt = (field: string) => {
  const error = `${field} must be a positive integer`;
  return z.number({ error }).int({ error }).positive({ error });
};

/** A TTL: exactly one of seconds, minutes, hours, days, blocks, with a positive integer. */
export const ttlSchema = z
  .strictObject(
    {
      seconds: positiveInt('seconds').optional(),
      minutes: positiveInt('minutes').optional(),
      hours: positiveInt('hours').optional(),
      days: positiveInt('days').optional(),
      blocks: positiveInt('blocks').optional(),
    },
    {
      error: (iss) =>
        iss.code === 'unrecognized_keys'
          ? `unknown ttl unit ${iss.keys.map((k) => JSON.stringify(k)).join(', ')}, expected one of ${TTL_UNITS.join(', ')}`
          : `ttl must be an object with one of ${TTL_UNITS.join(', ')}`,
    },
  )
  .refine((t) => Object.values(t).filter((v) => v !== undefined).length === 1, {
    error: `ttl must have exactly one of ${TTL_UNITS.join(', ')}`,
  })
  .transform((t) => {
    const unit = TTL_UNITS.find((u) => t[u] !== undefined) as (typeof TTL_UNITS)[number];
    return { [unit]: t[unit] } as Ttl;
  });

/** HNSW parameters with pgvector's defaults and bounds, and pgvector's `ef_construction >= 2 * m`. */
export const indexParamsSchema = z
  .object(
    {
      m: intBetween('index.m', HNSW_MIN_M, HNSW_MAX_M).default(HNSW_DEFAULT_M),
      ef_construction: intBetween('index.ef_construction', HNSW_MIN_EF_CONSTRUCTION, HNSW_MAX_EF_CONSTRUCTION).default(
        HNSW_DEFAULT_EF_CONSTRUCTION,
      ),
      ef_search: intBetween('index.ef_search', HNSW_MIN_EF_SEARCH, HNSW_MAX_EF_SEARCH).default(HNSW_DEFAULT_EF_SEARCH),
    },
    { error: 'index must be an object' },
  )
  .refine((p) => p.ef_construction >= 2 * p.m, {
    error: 'index.ef_construction must be greater than or equal to 2 * m',
    path: ['ef_construction'],
  });

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** The definition payload schema; its output is a normalized CollectionDefinition. */
export const collectionDefinitionSchema = z.object(
  {
    dim: intBetween('dim', DIM_MIN, DIM_MAX),
    metric: z.enum(METRICS, { error: `metric must be one of ${METRICS.join(', ')}` }),
    attributes: attributesSchema.optional().transform((a) => a ?? {}),
    open: z.boolean({ error: 'open must be true or false' }).default(false),
    writers: z
      .array(z.string().regex(ADDRESS, { error: 'writer must be a 0x address of 40 hex digits' }), {
        error: 'writers must be an array of addresses',
      })
      .max(DEFINITION_WRITERS_MAX, { error: `writers must list at most ${DEFINITION_WRITERS_MAX} addresses` })
      .default([])
      .transform((ws) => [...new Set(ws.map((w) => w.toLowerCase() as `0x${string}`))]),
    index: indexParamsSchema.prefault({}),
    default_ttl: ttlSchema.optional(),
    description: z
      .string({ error: 'description must be a string' })
      .refine((d) => utf8ByteLength(d) <= DEFINITION_DESCRIPTION_MAX_BYTES, {
        error: `description must be at most ${DEFINITION_DESCRIPTION_MAX_BYTES} utf-8 bytes`,
      })
      .optional(),
    embedder: z
      .looseObject(
        {
          model: z
            .string({ error: 'embedder.model must be a string' })
            .min(1, { error: 'embedder.model must not be empty' }),
        },
        {
          error: 'embedder must be an object with a model',
        },
      )
      .refine((e) => utf8ByteLength(JSON.stringify(e)) <= DEFINITION_EMBEDDER_MAX_BYTES, {
        error: `embedder must be at most ${DEFINITION_EMBEDDER_MAX_BYTES} utf-8 bytes of json`,
      })
      .optional(),
  },
  { error: 'collection definition must be a json object' },
);

/** What encodeCollectionDefinition accepts: a definition before defaults are applied. */
export type CollectionDefinitionInput = z.input<typeof collectionDefinitionSchema>;

// Compile-time check that the schema produces exactly the declared type.
type _SchemaMatches = z.output<typeof collectionDefinitionSchema> extends CollectionDefinition ? true : never;
const _schemaMatches: _SchemaMatches = true;
void _schemaMatches;

function toIssues(error: z.ZodError): CodecIssue[] {
  return error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: lowerFirst(i.message) }));
}

function lowerFirst(s: string): string {
  return s.charAt(0).toLowerCase() + s.slice(1);
}

function definitionError(issues: CodecIssue[]): InvalidCollectionDefinitionError {
  const first = issues[0];
  const head =
    first === undefined
      ? 'invalid'
      : first.path && !first.message.startsWith(first.path)
        ? `${first.path}: ${first.message}`
        : first.message;
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
  return new InvalidCollectionDefinitionError(`invalid collection definition: ${head}${more}`, issues);
}

/**
 * Validates a definition object (already JSON-parsed) and applies defaults.
 * @param value any value
 * @returns the normalized definition
 * @throws InvalidCollectionDefinitionError listing every issue
 * @example validateCollectionDefinition({ dim: 4, metric: 'cosine' }).index.m // 16
 */
export function validateCollectionDefinition(value: unknown): CollectionDefinition {
  const r = collectionDefinitionSchema.safeParse(value);
  if (!r.success) throw definitionError(toIssues(r.error));
  return r.data;
}

/**
 * Parses a collection definition entity payload (UTF-8 JSON).
 * @param bytes the payload
 * @returns the normalized definition (defaults applied, writers lowercased, unknown top-level keys dropped)
 * @throws InvalidCollectionDefinitionError for bad UTF-8, bad JSON or a value breaking the schema
 * @example parseCollectionDefinition(new TextEncoder().encode('{"dim":4,"metric":"l2"}')).open // false
 */
export function parseCollectionDefinition(bytes: Uint8Array): CollectionDefinition {
  if (bytes.length > DEFINITION_PAYLOAD_MAX_BYTES)
    throw definitionError([
      { path: '', message: `payload is ${bytes.length} bytes, more than ${DEFINITION_PAYLOAD_MAX_BYTES}` },
    ]);
  let text: string;
  try {
    text = utf8Decode(bytes);
  } catch {
    throw definitionError([{ path: '', message: 'payload is not valid utf-8' }]);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw definitionError([{ path: '', message: 'payload is not valid json' }]);
  }
  return validateCollectionDefinition(json);
}

/**
 * Encodes a definition as its entity payload: validated, normalized, keys in a fixed order.
 * @param def a definition (defaults may be omitted)
 * @returns UTF-8 JSON bytes that parseCollectionDefinition reads back to the normalized definition
 * @throws InvalidCollectionDefinitionError when `def` breaks the schema
 * @example encodeCollectionDefinition({ dim: 4, metric: 'cosine', attributes: { topic: 'str' } })
 */
export function encodeCollectionDefinition(def: CollectionDefinitionInput | CollectionDefinition): Uint8Array {
  const d = validateCollectionDefinition(def);
  const ordered: Record<string, unknown> = {
    dim: d.dim,
    metric: d.metric,
    attributes: d.attributes,
    open: d.open,
    writers: d.writers,
    index: { m: d.index.m, ef_construction: d.index.ef_construction, ef_search: d.index.ef_search },
  };
  if (d.default_ttl !== undefined) ordered.default_ttl = d.default_ttl;
  if (d.description !== undefined) ordered.description = d.description;
  if (d.embedder !== undefined) ordered.embedder = d.embedder;
  return utf8Encode(JSON.stringify(ordered));
}

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .filter((k) => o[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'undefined';
}

/**
 * Lists what an update of a definition changes that ARCHITECTURE.md §8.1 forbids. Allowed: `description`,
 * `writers`, `open`, `index.ef_search`, `default_ttl`, and new attributes. Everything else — `dim`,
 * `metric`, existing attribute types (or removing one), `index.m`, `index.ef_construction`, `embedder` — is fixed.
 * @param old the live definition
 * @param next the proposed one
 * @returns the violations, empty when the update is allowed
 * @example checkDefinitionUpdate(def, { ...def, dim: 8 }) // [{ field: 'dim', message: 'dim cannot change (4 to 8)' }]
 */
export function checkDefinitionUpdate(old: CollectionDefinition, next: CollectionDefinition): DefinitionViolation[] {
  const out: DefinitionViolation[] = [];
  if (old.dim !== next.dim) out.push({ field: 'dim', message: `dim cannot change (${old.dim} to ${next.dim})` });
  if (old.metric !== next.metric)
    out.push({ field: 'metric', message: `metric cannot change (${old.metric} to ${next.metric})` });
  for (const [name, type] of Object.entries(old.attributes)) {
    const t = Object.hasOwn(next.attributes, name) ? next.attributes[name] : undefined;
    if (t === undefined) out.push({ field: `attributes.${name}`, message: `attribute ${name} cannot be removed` });
    else if (t !== type)
      out.push({ field: `attributes.${name}`, message: `attribute ${name} cannot change type (${type} to ${t})` });
  }
  if (old.index.m !== next.index.m)
    out.push({ field: 'index.m', message: `index.m cannot change (${old.index.m} to ${next.index.m})` });
  if (old.index.ef_construction !== next.index.ef_construction) {
    out.push({
      field: 'index.ef_construction',
      message: `index.ef_construction cannot change (${old.index.ef_construction} to ${next.index.ef_construction})`,
    });
  }
  if (canonical(old.embedder) !== canonical(next.embedder))
    out.push({ field: 'embedder', message: 'embedder cannot change' });
  return out;
}

/**
 * Whether an entity owner's vectors count in a collection (ARCHITECTURE.md §8.2): any writer when `open`,
 * else the definition's owner or one of `writers`. Addresses compare case-insensitively.
 * @param definition the collection definition
 * @param definitionOwner the owner of the definition entity
 * @param writer the owner of the vector entity
 * @returns true when the vector entity counts
 * @example isWriterAllowed(def, '0xabc…', '0xABC…') // true
 */
export function isWriterAllowed(definition: CollectionDefinition, definitionOwner: string, writer: string): boolean {
  if (definition.open) return true;
  const w = writer.toLowerCase();
  return w === definitionOwner.toLowerCase() || definition.writers.includes(w as `0x${string}`);
}

/**
 * Whether a vector entity counts in a collection (ARCHITECTURE.md §8.2). Open: always. Closed: a permitted
 * writer (the definition's owner or one in `writers`) created it AND a permitted writer owns it now. The
 * creator matters because ChangeOwner lets anyone hand an entity to the owner: without it, a stranger
 * could inject into a closed collection and, with a newer last-modified block, shadow a legitimate id.
 * An unknown creator never counts in a closed collection.
 * @param definition the collection definition
 * @param definitionOwner the owner of the definition entity
 * @param entity the vector entity's current owner and creator
 * @example countsInCollection(def, alice, { owner: alice, creator: mallory }) // false when closed
 */
export function countsInCollection(
  definition: CollectionDefinition,
  definitionOwner: string,
  entity: { owner: string; creator: string | undefined },
): boolean {
  if (definition.open) return true;
  return (
    entity.creator !== undefined &&
    isWriterAllowed(definition, definitionOwner, entity.creator) &&
    isWriterAllowed(definition, definitionOwner, entity.owner)
  );
}

/**
 * The entity that defines a collection, in the shape `@arkiv-network/sdk` `createEntity` takes (minus
 * `expiresIn`): the encoded definition plus the `arkivector_type` / `arkivector_collection` attributes.
 * @param name the collection name
 * @param def the definition (defaults may be omitted)
 * @throws InvalidArgumentError for a bad name, InvalidCollectionDefinitionError for a bad definition
 * @example await wallet.createEntity({ ...encodeCollectionEntity('notes', { dim: 4, metric: 'cosine' }), expiresIn: 86400 })
 */
export function encodeCollectionEntity(name: string, def: CollectionDefinitionInput | CollectionDefinition) {
  const nameCheck = collectionNameSchema.safeParse(name);
  if (!nameCheck.success)
    throw new InvalidArgumentError(nameCheck.error.issues[0]?.message ?? 'invalid collection name');
  return {
    payload: encodeCollectionDefinition(def),
    contentType: COLLECTION_CONTENT_TYPE,
    attributes: [
      { key: ATTR_TYPE, value: ENTITY_TYPE_COLLECTION },
      { key: ATTR_COLLECTION, value: name },
    ],
  };
}
