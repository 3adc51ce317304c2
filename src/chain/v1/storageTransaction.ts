// Codec for Arkiv v1 storage transaction calldata: brotli(RLP([creates, updates, deletes, extends, ownerChanges])).
// The devnet uses it to admit and execute transactions; the indexer uses it to decode what it follows.
import { promisify } from 'node:util';
import { brotliCompress, brotliCompressSync, brotliDecompressSync, constants as zlibConstants } from 'node:zlib';
import { bytesToHex, fromRlp, toRlp, type Address, type Hex } from 'viem';
import { batchSize, emptyBatch, type CreateOp, type EntityBatch } from '../operations.ts';
import {
  ATTRIBUTE_NAME_PATTERN,
  MAX_CONTENT_TYPE_BYTES,
  MAX_DECOMPRESSED_BYTES,
  MAX_OPERATIONS_PER_TX,
} from './protocol.ts';

export type {
  ChangeOwnerOp,
  CreateOp,
  ExtendOp,
  NumericAttribute,
  StringAttribute,
  UpdateOp,
} from '../operations.ts';
/** A v1 storage transaction carries exactly one entity batch, in the batch's own list order. */
export type StorageOps = EntityBatch;

/** Calldata that the node would refuse before execution; `message` follows op-geth's wording. */
export class StorageTxDecodeError extends Error {
  override name = 'StorageTxDecodeError';
}

const UINT64_MAX = (1n << 64n) - 1n;
const utf8 = new TextDecoder('utf-8');
const utf8Encoder = new TextEncoder();

type RlpItem = Uint8Array | RlpItem[];

// Callers index into lists whose length they checked; `undefined` still gets a decode error, never a crash.
function asList(item: RlpItem | undefined, what: string): RlpItem[] {
  if (item === undefined) throw new StorageTxDecodeError(`rlp: missing ${what}`);
  if (!Array.isArray(item)) throw new StorageTxDecodeError(`rlp: expected list for ${what}`);
  return item;
}

function asBytes(item: RlpItem | undefined, what: string): Uint8Array {
  if (item === undefined) throw new StorageTxDecodeError(`rlp: missing ${what}`);
  if (Array.isArray(item)) throw new StorageTxDecodeError(`rlp: expected string for ${what}`);
  return item;
}

function asFixed(item: RlpItem | undefined, size: number, what: string): Hex {
  const bytes = asBytes(item, what);
  if (bytes.length !== size) {
    throw new StorageTxDecodeError(`rlp: input string too ${bytes.length < size ? 'short' : 'long'} for ${what}`);
  }
  return bytesToHex(bytes);
}

// Go's RLP decoder refuses leading zero bytes and values wider than the target type.
function asUint64(item: RlpItem | undefined, what: string): bigint {
  const bytes = asBytes(item, what);
  if (bytes.length > 8) throw new StorageTxDecodeError(`rlp: input string too long for uint64, decoding into ${what}`);
  if (bytes.length > 0 && bytes[0] === 0) {
    throw new StorageTxDecodeError(`rlp: non-canonical integer (leading zero bytes) for ${what}`);
  }
  let value = 0n;
  for (const byte of bytes) value = (value << 8n) | BigInt(byte);
  return value;
}

function asString(item: RlpItem | undefined, what: string): string {
  return utf8.decode(asBytes(item, what));
}

function decodeAttributes(item: RlpItem | undefined, what: string) {
  return asList(item, what).map((pair, i) => {
    const fields = asList(pair, `${what}[${i}]`);
    if (fields.length !== 2) throw new StorageTxDecodeError(`rlp: expected 2 fields in ${what}[${i}]`);
    return { key: asString(fields[0], `${what}[${i}].Key`), raw: fields[1] };
  });
}

function decodeCreateFields(fields: RlpItem[], what: string, order: 'create' | 'update'): CreateOp {
  const [btlItem, contentTypeItem] = order === 'create' ? [fields[0], fields[1]] : [fields[2], fields[1]];
  return {
    btl: asUint64(btlItem, `${what}.BTL`),
    contentType: asString(contentTypeItem, `${what}.ContentType`),
    payload: asBytes(fields[order === 'create' ? 2 : 3], `${what}.Payload`),
    stringAttributes: decodeAttributes(fields[order === 'create' ? 3 : 4], `${what}.StringAnnotations`).map(
      ({ key, raw }, i) => ({ key, value: asString(raw, `${what}.StringAnnotations[${i}].Value`) }),
    ),
    numericAttributes: decodeAttributes(fields[order === 'create' ? 4 : 5], `${what}.NumericAnnotations`).map(
      ({ key, raw }, i) => ({ key, value: asUint64(raw, `${what}.NumericAnnotations[${i}].Value`) }),
    ),
  };
}

function expectFields(item: RlpItem | undefined, count: number, what: string): RlpItem[] {
  const fields = asList(item, what);
  if (fields.length !== count) {
    throw new StorageTxDecodeError(`rlp: ${fields.length < count ? 'too few' : 'too many'} elements for ${what}`);
  }
  return fields;
}

/** Decodes RLP bytes (already decompressed) into storage operations. Throws StorageTxDecodeError. */
export function decodeStorageOpsRlp(rlp: Uint8Array): StorageOps {
  let root: RlpItem;
  try {
    root = fromRlp(rlp, 'bytes') as RlpItem;
  } catch (error) {
    throw new StorageTxDecodeError(`rlp: ${(error as Error).message.split('\n')[0]}`);
  }
  const [creates, updates, deletes, extendsList, ownerChanges] = expectFields(root, 5, 'ArkivTransaction');
  return {
    creates: asList(creates, 'Create').map((c, i) =>
      decodeCreateFields(expectFields(c, 5, `create[${i}]`), `create[${i}]`, 'create'),
    ),
    updates: asList(updates, 'Update').map((u, i) => {
      const fields = expectFields(u, 6, `update[${i}]`);
      return {
        entityKey: asFixed(fields[0], 32, `update[${i}].EntityKey`),
        ...decodeCreateFields(fields, `update[${i}]`, 'update'),
      };
    }),
    deletes: asList(deletes, 'Delete').map((d, i) => asFixed(d, 32, `delete[${i}]`)),
    extends: asList(extendsList, 'Extend').map((e, i) => {
      const fields = expectFields(e, 2, `extend[${i}]`);
      return {
        entityKey: asFixed(fields[0], 32, `extend[${i}].EntityKey`),
        numberOfBlocks: asUint64(fields[1], `extend[${i}].NumberOfBlocks`),
      };
    }),
    ownerChanges: asList(ownerChanges, 'ChangeOwner').map((o, i) => {
      const fields = expectFields(o, 2, `changeOwner[${i}]`);
      return {
        entityKey: asFixed(fields[0], 32, `changeOwner[${i}].EntityKey`),
        newOwner: asFixed(fields[1], 20, `changeOwner[${i}].NewOwner`) as Address,
      };
    }),
  };
}

/** Decompresses and decodes storage transaction calldata. Throws StorageTxDecodeError. */
export function decodeStorageTransaction(data: Uint8Array): StorageOps {
  if (data.length === 0) throw new StorageTxDecodeError('arkiv transaction data is empty');
  let rlp: Uint8Array;
  try {
    rlp = brotliDecompressSync(data, { maxOutputLength: MAX_DECOMPRESSED_BYTES });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ERR_BUFFER_TOO_LARGE') {
      throw new StorageTxDecodeError(`decompressed data exceeds ${MAX_DECOMPRESSED_BYTES} bytes`);
    }
    throw new StorageTxDecodeError('failed to decompress arkiv transaction: invalid brotli data');
  }
  return decodeStorageOpsRlp(rlp);
}

function validateAttributes(op: CreateOp, what: string): void {
  for (const list of [op.stringAttributes, op.numericAttributes]) {
    const seen = new Set<string>();
    for (const { key } of list) {
      if (!ATTRIBUTE_NAME_PATTERN.test(key)) {
        throw new StorageTxDecodeError(
          `${what}: invalid annotation identifier (must match ^[\\p{L}_][\\p{L}\\p{N}_]*$): ${JSON.stringify(key)}`,
        );
      }
      if (seen.has(key)) throw new StorageTxDecodeError(`${what}: duplicate annotation key ${JSON.stringify(key)}`);
      seen.add(key);
    }
  }
}

function validateEntityFields(op: CreateOp, what: string): void {
  if (op.btl === 0n) throw new StorageTxDecodeError(`${what} BTL is 0`);
  if (op.contentType.length === 0) throw new StorageTxDecodeError(`${what} contentType is empty`);
  if (utf8Encoder.encode(op.contentType).length > MAX_CONTENT_TYPE_BYTES) {
    throw new StorageTxDecodeError(`${what} contentType is longer than ${MAX_CONTENT_TYPE_BYTES} bytes`);
  }
  validateAttributes(op, what);
}

/** The node's stateless checks (ArkivTransaction.Validate); throws StorageTxDecodeError on the first failure. */
export function validateStorageOps(ops: StorageOps): void {
  if (batchSize(ops) > MAX_OPERATIONS_PER_TX)
    throw new StorageTxDecodeError(`number of operations is greater than ${MAX_OPERATIONS_PER_TX}`);
  ops.creates.forEach((op, i) => {
    validateEntityFields(op, `create[${i}]`);
  });
  ops.updates.forEach((op, i) => {
    validateEntityFields(op, `update[${i}]`);
  });
  ops.extends.forEach((op, i) => {
    if (op.numberOfBlocks === 0n) throw new StorageTxDecodeError(`extend[${i}] number of blocks is 0`);
  });
}

function uintToRlpHex(value: bigint): Hex {
  if (value < 0n || value > UINT64_MAX) throw new RangeError(`${value} is not a uint64`);
  if (value === 0n) return '0x';
  const hex = value.toString(16);
  return `0x${hex.length % 2 ? '0' : ''}${hex}`;
}

const textHex = (text: string): Hex => bytesToHex(utf8Encoder.encode(text));

function encodeEntityFields(op: CreateOp) {
  return {
    btl: uintToRlpHex(op.btl),
    contentType: textHex(op.contentType),
    // Bytes, not hex: a hex round trip of a multi-MiB payload costs seconds.
    payload: op.payload,
    strings: op.stringAttributes.map(({ key, value }) => [textHex(key), textHex(value)]),
    numbers: op.numericAttributes.map(({ key, value }) => [textHex(key), uintToRlpHex(value)]),
  };
}

/** RLP-encodes storage operations in the node's field order (no compression, no validation). */
export function encodeStorageOpsRlp(ops: StorageOps): Uint8Array {
  const tree = [
    ops.creates.map((op) => {
      const f = encodeEntityFields(op);
      return [f.btl, f.contentType, f.payload, f.strings, f.numbers];
    }),
    ops.updates.map((op) => {
      const f = encodeEntityFields(op);
      return [op.entityKey, f.contentType, f.btl, f.payload, f.strings, f.numbers];
    }),
    ops.deletes,
    ops.extends.map((op) => [op.entityKey, uintToRlpHex(op.numberOfBlocks)]),
    ops.ownerChanges.map((op) => [op.entityKey, op.newOwner]),
  ];
  return toRlp(tree as never, 'bytes');
}

const BROTLI_OPTIONS = { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 9 } };
const brotliCompressAsync = promisify(brotliCompress);

/** brotli(RLP(ops)), as the SDK sends it. */
export function encodeStorageTransaction(ops: StorageOps): Uint8Array {
  return brotliCompressSync(encodeStorageOpsRlp(ops), BROTLI_OPTIONS);
}

/**
 * The same bytes as encodeStorageTransaction, compressed on libuv's thread pool: at quality 9 a large batch
 * of vectors compresses slowly enough that on the event loop it held every search back.
 */
export async function encodeStorageTransactionOffThread(ops: StorageOps): Promise<Uint8Array> {
  return brotliCompressAsync(encodeStorageOpsRlp(ops), BROTLI_OPTIONS);
}

export const emptyStorageOps: () => StorageOps = emptyBatch;
