// DB-chain attribute cells (reference/arkiv-gen-d.md §1.4–§1.8): Ident32 names, the eleven type ids and
// their canonical value bytes, the two writable system cells, sorting and per-op limits, creation flags
// and expiry fields. `encodeCell`/`decodeCell` are exact inverses over canonical bytes; every refusal is
// a DbChainCodecError naming the node error the same cell would revert with.
//
// Two strengths of name check: the node's (charset, length, system names) applies to everything, read
// or written; `strict` adds the SDK's rules (reserved words, `--`) for what our own writer sends.
import { bytesToHex, hexToBigInt, hexToBytes, isAddress, numberToHex, type Address, type Hex } from 'viem';
import { I32_MAX, I32_MIN } from '../../collections/index.ts';
import { DbChainCodecError, refuse } from './errors.ts';

export const TYPE_IDS = {
  tombstone: 0,
  bool: 1,
  i32: 2,
  u64: 3,
  u256: 4,
  dec: 5,
  bytes32: 6,
  bytes: 7,
  str: 8,
  addr: 9,
  key: 10,
} as const;
export type CellType = keyof typeof TYPE_IDS;
const TYPE_NAMES = Object.fromEntries(Object.entries(TYPE_IDS).map(([k, v]) => [v, k])) as Record<
  number,
  CellType | undefined
>;

/** One attribute cell as the codec sees it: a name and a typed value. */
export type Cell =
  | { name: string; type: 'tombstone' }
  | { name: string; type: 'bool'; value: boolean }
  | { name: string; type: 'i32'; value: number }
  | { name: string; type: 'u64' | 'u256'; value: bigint }
  /** A signed int256 holding value × 10^18. */
  | { name: string; type: 'dec'; value: bigint }
  | { name: string; type: 'bytes32' | 'key'; value: Hex }
  | { name: string; type: 'addr'; value: Address }
  | { name: string; type: 'bytes'; value: Uint8Array }
  | { name: string; type: 'str'; value: string };

/** A cell on the wire: `(bytes32 name, uint8 typeId, bytes value)`. */
export interface WireCell {
  name: Hex;
  typeId: number;
  value: Hex;
}

/** At most this many cells per op, the two system cells included (`MAX_ATTRIBUTES`). */
export const MAX_CELLS_PER_OP = 32;
/** User cells a create can carry beside `$payload` and `$contentType`. */
export const MAX_USER_CELLS_PER_CREATE = MAX_CELLS_PER_OP - 2;
export const NAME_MAX_BYTES = 32;
export const STR_VALUE_MAX_BYTES = 128;
export const PAYLOAD_MAX_BYTES = 131_072;

/** The two system cells a writer may set (create) or replace and clear (patch). */
export const PAYLOAD_CELL = '$payload';
export const CONTENT_TYPE_CELL = '$contentType';
/** Names the SDK reserves, case-insensitively: query keywords and type tags (the query parser refuses them). */
export const RESERVED_NAMES: ReadonlySet<string> = new Set(
  'and or not true false startswith exists typeof bool i32 u64 u256 dec bytes32 bytes str addr key'.split(' '),
);
/** Tiramisu's Ident32 rule (variant L): a lowercase letter, then lowercase letters, digits, `.`, `-`, `_`. */
export const USER_NAME_PATTERN = /^[a-z][a-z0-9._-]*$/;

/** Creation flag bits; any other bit reverts `ReservedCreationFlags`. */
export const CREATION_FLAGS = { readonly: 0b01, permissionlessExtension: 0b10 } as const;
export const CREATION_FLAGS_MASK = 0b11;

export const U64_MAX = (1n << 64n) - 1n;
/** `expiresAt` of an entity that never expires. */
export const PERMANENT_EXPIRES_AT = U64_MAX;

const WORD = 1n << 256n;
const utf8 = new TextEncoder();
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Checks a name by the node's rules (and the SDK's when `strict`); returns it.
 * @throws DbChainCodecError Ident32Empty, Ident32InvalidByte, SystemAttributeNotWritable, ReservedName
 */
export function checkName(name: string, strict: boolean): string {
  if (name.length === 0) refuse('Ident32Empty', 'attribute name is empty');
  const bytes = utf8.encode(name);
  if (bytes.length > NAME_MAX_BYTES)
    throw new DbChainCodecError(
      'Ident32InvalidByte',
      `attribute name ${JSON.stringify(name)} is ${bytes.length} bytes, more than ${NAME_MAX_BYTES}`,
      { name: 'Ident32InvalidByte', args: [BigInt(NAME_MAX_BYTES), '0x00'] },
    );
  if (name.startsWith('$')) {
    if (name !== PAYLOAD_CELL && name !== CONTENT_TYPE_CELL)
      refuse('SystemAttributeNotWritable', `system attribute ${name} is set by the node, not written`, [
        encodeName(name, false),
      ]);
    return name;
  }
  if (!USER_NAME_PATTERN.test(name)) {
    const at = [...bytes].findIndex((b, i) => !(i === 0 ? isLower(b) : isLower(b) || isDigit(b) || isPunct(b)));
    refuse(
      'Ident32InvalidByte',
      `attribute name ${JSON.stringify(name)}: byte ${at} is not allowed (names are a lowercase letter, then a-z 0-9 . - _)`,
      [BigInt(at), numberToHex(bytes[at] ?? 0, { size: 1 })],
    );
  }
  if (strict && RESERVED_NAMES.has(name))
    throw new DbChainCodecError('ReservedName', `attribute name ${JSON.stringify(name)} is a reserved word`);
  if (strict && name.includes('--'))
    throw new DbChainCodecError('ReservedName', `attribute name ${JSON.stringify(name)} contains "--"`);
  return name;
}
const isLower = (b: number) => b >= 0x61 && b <= 0x7a;
const isDigit = (b: number) => b >= 0x30 && b <= 0x39;
const isPunct = (b: number) => b === 0x2e || b === 0x2d || b === 0x5f;

/**
 * A name as its bytes32: ASCII, left-aligned, zero-padded.
 * @example encodeName('kind') // '0x6b696e6400…00'
 */
export function encodeName(name: string, strict = true): Hex {
  if (strict) checkName(name, true);
  const bytes = utf8.encode(name);
  const word = new Uint8Array(32);
  word.set(bytes.subarray(0, 32));
  return bytesToHex(word);
}

/** The name in a bytes32, checked by the node's rules (no bytes after the first zero). */
export function decodeName(word: Hex): string {
  const bytes = hexToBytes(word);
  if (bytes.length !== 32) refuse('Ident32Empty', 'attribute name is not 32 bytes');
  let end = bytes.indexOf(0);
  if (end < 0) end = 32;
  const after = bytes.findIndex((b, i) => i > end && b !== 0);
  if (after >= 0)
    refuse('Ident32InvalidByte', `attribute name has byte ${after} after its end`, [
      BigInt(after),
      numberToHex(bytes[after] ?? 0, { size: 1 }),
    ]);
  const bad = bytes.subarray(0, end).findIndex((b) => b > 0x7e || b < 0x21);
  if (bad >= 0)
    refuse('Ident32InvalidByte', `attribute name byte ${bad} is not printable ASCII`, [
      BigInt(bad),
      numberToHex(bytes[bad] ?? 0, { size: 1 }),
    ]);
  return checkName(new TextDecoder().decode(bytes.subarray(0, end)), false);
}

const word = (v: bigint): Hex => numberToHex(v < 0n ? v + WORD : v, { size: 32 });
function wordValue(value: Hex, name: string, type: CellType): bigint {
  if (value.length !== 66) invalidValue(name, type, 'is not one 32-byte word');
  return hexToBigInt(value);
}
const signed = (v: bigint): bigint => (v >= WORD >> 1n ? v - WORD : v);

function invalidValue(name: string, type: CellType, why: string): never {
  refuse('InvalidValueType', `attribute ${name}: ${type} value ${why}`, [encodeName(name, false), TYPE_IDS[type]]);
}
function outOfRange(name: string, type: CellType, why: string): never {
  throw new DbChainCodecError('ValueOutOfRange', `attribute ${name}: ${type} value ${why}`);
}

/**
 * A cell on the wire. Values are checked against their type first.
 * @param strict apply our writer's name rules too (reserved words, `--`)
 * @example encodeCell({ name: 'rank', type: 'i32', value: -1 }) // { name: '0x72616e6b…', typeId: 2, value: '0xff…ff' }
 */
export function encodeCell(cell: Cell, strict = true): WireCell {
  const name = encodeName(checkName(cell.name, strict), false);
  const typeId = TYPE_IDS[cell.type];
  const out = (value: Hex): WireCell => ({ name, typeId, value });
  switch (cell.type) {
    case 'tombstone':
      return out('0x');
    case 'bool':
      return out(word(cell.value ? 1n : 0n));
    case 'i32':
      if (!Number.isInteger(cell.value) || cell.value < I32_MIN || cell.value > I32_MAX)
        outOfRange(cell.name, 'i32', `${cell.value} is not an integer from ${I32_MIN} to ${I32_MAX}`);
      return out(word(BigInt(cell.value)));
    case 'u64':
      if (cell.value < 0n || cell.value > U64_MAX) outOfRange(cell.name, 'u64', `${cell.value} is outside 0 to 2^64-1`);
      return out(word(cell.value));
    case 'u256':
      if (cell.value < 0n || cell.value >= WORD) outOfRange(cell.name, 'u256', `${cell.value} is outside 0 to 2^256-1`);
      return out(word(cell.value));
    case 'dec':
      if (cell.value < -(WORD >> 1n) || cell.value >= WORD >> 1n)
        outOfRange(cell.name, 'dec', `${cell.value} is outside int256`);
      return out(word(cell.value));
    case 'bytes32':
    case 'key':
      if (!/^0x[0-9a-fA-F]{64}$/.test(cell.value)) outOfRange(cell.name, cell.type, 'is not 32 bytes of hex');
      return out(cell.value.toLowerCase() as Hex);
    case 'addr':
      if (!isAddress(cell.value, { strict: false })) outOfRange(cell.name, 'addr', 'is not an address');
      return out(word(hexToBigInt(cell.value)));
    case 'bytes':
      if (cell.name !== PAYLOAD_CELL) invalidValue(cell.name, 'bytes', 'is only for $payload');
      if (cell.value.length > PAYLOAD_MAX_BYTES)
        throw new DbChainCodecError(
          'ValueTooLong',
          `$payload is ${cell.value.length} bytes, more than ${PAYLOAD_MAX_BYTES}`,
        );
      return out(bytesToHex(cell.value));
    case 'str': {
      const bytes = utf8.encode(cell.value);
      // TextEncoder turns a lone surrogate into U+FFFD: the round trip differs exactly then.
      if (strictUtf8.decode(bytes) !== cell.value)
        outOfRange(cell.name, 'str', 'is not valid unicode (lone surrogate)');
      if (bytes.length > STR_VALUE_MAX_BYTES)
        throw new DbChainCodecError(
          'ValueTooLong',
          `attribute ${cell.name}: str value is ${bytes.length} bytes, more than ${STR_VALUE_MAX_BYTES}`,
        );
      return out(bytesToHex(bytes));
    }
  }
}

/**
 * The cell a wire triple holds, checked by the node's rules (canonical value bytes, str ≤ 128 bytes of
 * valid UTF-8, bytes only for `$payload`).
 * @throws DbChainCodecError InvalidValueType, Ident32InvalidByte, SystemAttributeNotWritable, TombstoneValueNotEmpty, ValueTooLong
 */
export function decodeCell(wire: WireCell): Cell {
  const name = decodeName(wire.name);
  const type = TYPE_NAMES[wire.typeId];
  if (type === undefined)
    refuse('InvalidValueType', `attribute ${name}: type id ${wire.typeId} is unknown`, [wire.name, wire.typeId]);
  const v = wire.value;
  switch (type) {
    case 'tombstone':
      if (v !== '0x') refuse('TombstoneValueNotEmpty', `attribute ${name}: a tombstone has no value`, [wire.name]);
      return { name, type };
    case 'bool': {
      const n = wordValue(v, name, type);
      if (n > 1n) invalidValue(name, type, 'is neither 0 nor 1');
      return { name, type, value: n === 1n };
    }
    case 'i32': {
      const n = signed(wordValue(v, name, type));
      if (n < BigInt(I32_MIN) || n > BigInt(I32_MAX)) invalidValue(name, type, 'is not a sign-extended 32-bit integer');
      return { name, type, value: Number(n) };
    }
    case 'u64': {
      const n = wordValue(v, name, type);
      if (n > U64_MAX) invalidValue(name, type, 'has bits above 64');
      return { name, type, value: n };
    }
    case 'u256':
      return { name, type, value: wordValue(v, name, type) };
    case 'dec':
      return { name, type, value: signed(wordValue(v, name, type)) };
    case 'bytes32':
    case 'key':
      wordValue(v, name, type);
      return { name, type, value: v.toLowerCase() as Hex };
    case 'addr': {
      const n = wordValue(v, name, type);
      if (n >> 160n !== 0n) invalidValue(name, type, 'has bits above 160');
      return { name, type, value: numberToHex(n, { size: 20 }) as Address };
    }
    case 'bytes': {
      if (name !== PAYLOAD_CELL) invalidValue(name, type, 'is only for $payload');
      const bytes = hexToBytes(v);
      if (bytes.length > PAYLOAD_MAX_BYTES)
        throw new DbChainCodecError(
          'ValueTooLong',
          `$payload is ${bytes.length} bytes, more than ${PAYLOAD_MAX_BYTES}`,
          // The node reverts an over-long value as a non-canonical one.
          { name: 'InvalidValueType', args: [wire.name, wire.typeId] },
        );
      return { name, type, value: bytes };
    }
    case 'str': {
      const bytes = hexToBytes(v);
      if (bytes.length > STR_VALUE_MAX_BYTES)
        throw new DbChainCodecError(
          'ValueTooLong',
          `attribute ${name}: str value is ${bytes.length} bytes, more than ${STR_VALUE_MAX_BYTES}`,
          { name: 'InvalidValueType', args: [wire.name, wire.typeId] },
        );
      let value: string;
      try {
        value = strictUtf8.decode(bytes);
      } catch {
        invalidValue(name, type, 'is not valid UTF-8');
      }
      return { name, type, value };
    }
  }
}

/**
 * The rules on a whole list of wire cells: strictly ascending raw names (so unique), at most 32, no
 * tombstone in a create, and the system cells typed as the node lifts them (`$payload` bytes,
 * `$contentType` str).
 * @throws DbChainCodecError AttributesNotSorted, TooManyAttributes, TombstoneInCreate, InvalidValueType
 */
export function checkCellList(cells: readonly WireCell[], where: 'create' | 'patch'): void {
  if (cells.length > MAX_CELLS_PER_OP)
    refuse('TooManyAttributes', `${cells.length} attribute cells in one operation, more than ${MAX_CELLS_PER_OP}`, [
      BigInt(cells.length),
      BigInt(MAX_CELLS_PER_OP),
    ]);
  for (let i = 1; i < cells.length; i++) {
    const prev = cells[i - 1]?.name.toLowerCase() ?? '';
    const here = cells[i]?.name.toLowerCase() ?? '';
    if (!(prev < here))
      refuse(
        'AttributesNotSorted',
        `attribute cells are not strictly ascending by name at cell ${i} (${prev === here ? 'a name repeats' : 'out of order'})`,
      );
  }
  for (const cell of cells) {
    if (cell.typeId === TYPE_IDS.tombstone && where === 'create')
      refuse('TombstoneInCreate', 'a create cannot carry a tombstone', [cell.name]);
    const system = cell.name === PAYLOAD_NAME_WORD ? 'bytes' : cell.name === CONTENT_TYPE_NAME_WORD ? 'str' : undefined;
    if (system && cell.typeId !== TYPE_IDS[system] && cell.typeId !== TYPE_IDS.tombstone)
      refuse('InvalidValueType', `${decodeName(cell.name)} must be ${system}`, [cell.name, cell.typeId]);
  }
}
const PAYLOAD_NAME_WORD = encodeName(PAYLOAD_CELL);
const CONTENT_TYPE_NAME_WORD = encodeName(CONTENT_TYPE_CELL);

/** Sorts cells the way the node requires (by raw name bytes; lowercase hex compares like bytes). */
export function sortCells<T extends { name: Hex }>(cells: readonly T[]): T[] {
  return [...cells].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** A create's content split into what the node lifts out (payload, content type) and the user cells. */
export interface CreateContent {
  payload: Uint8Array;
  contentType: string;
  attributes: Cell[];
}

/**
 * The cells of a create, system cells included, sorted (the SDK always writes both system cells, even an
 * empty payload).
 */
export function createCells(content: CreateContent): Cell[] {
  if (content.attributes.length > MAX_USER_CELLS_PER_CREATE)
    refuse(
      'TooManyAttributes',
      `${content.attributes.length} user attributes, more than ${MAX_USER_CELLS_PER_CREATE} (32 cells less $payload and $contentType)`,
      [BigInt(content.attributes.length + 2), BigInt(MAX_CELLS_PER_OP)],
    );
  return [
    { name: CONTENT_TYPE_CELL, type: 'str', value: content.contentType },
    { name: PAYLOAD_CELL, type: 'bytes', value: content.payload },
    ...content.attributes,
  ];
}

/** The inverse of createCells: absent system cells are empty (the node's fields default so). */
export function splitCreateCells(cells: readonly Cell[]): CreateContent {
  let payload: Uint8Array = new Uint8Array();
  let contentType = '';
  const attributes: Cell[] = [];
  for (const cell of cells) {
    if (cell.name === PAYLOAD_CELL && cell.type === 'bytes') payload = cell.value;
    else if (cell.name === CONTENT_TYPE_CELL && cell.type === 'str') contentType = cell.value;
    else attributes.push(cell);
  }
  return { payload, contentType, attributes };
}

/** Checks a creation-flags byte. @throws DbChainCodecError ReservedCreationFlags */
export function checkCreationFlags(flags: number): number {
  if (!Number.isInteger(flags) || flags < 0 || flags > 255 || (flags & ~CREATION_FLAGS_MASK) !== 0)
    refuse(
      'ReservedCreationFlags',
      `creation flags ${flags} set bits other than readonly (1) and permissionless extension (2)`,
      [flags],
    );
  return flags;
}

/** The `(expiresAt, minLifetime)` pair of a create or an extend. */
export interface ExpiryFields {
  expiresAt: bigint;
  minLifetime: bigint;
}

/**
 * The block an entity's expiry resolves to when applied at `block`: max(expiresAt, block + minLifetime),
 * which must fit uint64 and lie after `block`.
 * @throws DbChainCodecError InvalidExpiry (overflow) or ExpiryDeadOnArrival
 * @example resolveExpiry({ expiresAt: 0n, minLifetime: 30n }, 222498n) // 222528n
 */
export function resolveExpiry(fields: ExpiryFields, block: bigint): bigint {
  checkExpiryFields(fields);
  const relative = block + fields.minLifetime;
  if (relative > U64_MAX)
    throw new DbChainCodecError('InvalidExpiry', `block ${block} + minLifetime ${fields.minLifetime} overflows uint64`);
  // bigints: Math.max does not take them.
  let target = relative;
  if (fields.expiresAt > target) target = fields.expiresAt;
  if (target <= block) refuse('ExpiryDeadOnArrival', `expiry ${target} is not after block ${block}`, [target, block]);
  return target;
}

/** Both fields within uint64. @throws DbChainCodecError InvalidExpiry */
export function checkExpiryFields(fields: ExpiryFields): void {
  for (const [what, v] of [
    ['expiresAt', fields.expiresAt],
    ['minLifetime', fields.minLifetime],
  ] as const)
    if (v < 0n || v > U64_MAX) throw new DbChainCodecError('InvalidExpiry', `${what} ${v} is outside uint64`);
}
