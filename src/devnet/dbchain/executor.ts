// The DB-chain executor's rules (arkiv-gen-d.md §1): canonical operationData, the attribute rules, creation
// flags, expiry resolution, the per-op auth/liveness table (§1.9), all-or-nothing batches, the entity nonce
// and the five events. A broken rule throws a Revert carrying the custom error's ABI bytes.
import {
  bytesToHex,
  concat,
  decodeAbiParameters,
  decodeFunctionData,
  encodeAbiParameters,
  encodeErrorResult,
  encodeEventTopics,
  encodeAbiParameters as encodeParams,
  hexToBytes,
  hexToString,
  keccak256,
  numberToHex,
  pad,
  size,
  type Address,
  type Hex,
} from 'viem';
import { isLive, type DbAttribute, type DbEntity, type DbEntityState } from './state.ts';
import {
  FLAG_PERMISSIONLESS_EXTENSION,
  FLAG_READONLY,
  MAX_ATTRIBUTES,
  MAX_PAYLOAD_BYTES,
  MAX_STR_BYTES,
  OP_CREATE,
  OP_DELETE,
  OP_EXTEND,
  OP_PATCH,
  OP_STRUCTS,
  OP_TRANSFER,
  REGISTRY_ABI,
  REGISTRY_ADDRESS,
  TYPE_IDS,
  UINT64_MAX,
} from './wire.ts';

type ErrorName = Extract<(typeof REGISTRY_ABI)[number], { type: 'error' }>['name'];

/** A reverted execution: `data` is the custom error as the node returns it. */
export class Revert extends Error {
  constructor(
    readonly errorName: string,
    readonly data: Hex,
  ) {
    super(`execution reverted: ${errorName}`);
  }
}

function revert(errorName: ErrorName, args: readonly unknown[] = []): never {
  const data = encodeErrorResult({ abi: REGISTRY_ABI, errorName, args } as never);
  throw new Revert(errorName, data);
}

export interface RegistryLog {
  topics: Hex[];
  data: Hex;
}

const SYSTEM_WRITABLE = new Set(['$payload', '$contentType']);
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The name of an Ident32 (left-aligned ASCII, zero padded), checked as variant L (§1.4). */
function identName(raw: Hex): string {
  const bytes = hexToBytes(raw);
  let end = bytes.indexOf(0);
  if (end === -1) end = bytes.length;
  for (let i = end; i < bytes.length; i++) {
    if (bytes[i] !== 0) revert('Ident32InvalidByte', [BigInt(i), bytesToHex(bytes.subarray(i, i + 1))]);
  }
  if (end === 0) revert('Ident32Empty');
  if (bytes[0] === 0x24) return new TextDecoder().decode(bytes.subarray(0, end));
  for (let i = 0; i < end; i++) {
    const b = bytes[i] ?? 0;
    const lower = b >= 0x61 && b <= 0x7a;
    const ok = i === 0 ? lower : lower || (b >= 0x30 && b <= 0x39) || b === 0x2e || b === 0x2d || b === 0x5f;
    if (!ok) revert('Ident32InvalidByte', [BigInt(i), bytesToHex(bytes.subarray(i, i + 1))]);
  }
  return new TextDecoder().decode(bytes.subarray(0, end));
}

const isWord = (value: Hex) => size(value) === 32;
const zeroPrefix = (value: Hex, zeroBytes: number) => /^0+$/.test(value.slice(2, 2 + 2 * zeroBytes));

/** Whether `value` is the canonical encoding of type `typeId` for a user attribute (§1.5). */
function canonicalValue(typeId: number, value: Hex): boolean {
  switch (typeId) {
    case TYPE_IDS.bool:
      return isWord(value) && (BigInt(value) === 0n || BigInt(value) === 1n);
    case TYPE_IDS.i32: {
      if (!isWord(value)) return false;
      const n = BigInt.asIntN(256, BigInt(value));
      return n >= -(2n ** 31n) && n < 2n ** 31n;
    }
    case TYPE_IDS.u64:
      return isWord(value) && zeroPrefix(value, 24);
    case TYPE_IDS.u256:
    case TYPE_IDS.dec:
    case TYPE_IDS.bytes32:
    case TYPE_IDS.key:
      return isWord(value);
    case TYPE_IDS.addr:
      return isWord(value) && zeroPrefix(value, 12);
    case TYPE_IDS.str:
      return size(value) <= MAX_STR_BYTES && validUtf8(value);
    default:
      return false;
  }
}

function validUtf8(value: Hex): boolean {
  try {
    utf8.decode(hexToBytes(value));
    return true;
  } catch {
    return false;
  }
}

interface Cell {
  raw: Hex;
  name: string;
  typeId: number;
  value: Hex;
}

/** Checks a create's or patch's triples: count, order, names, system cells, types; returns them named. */
function readCells(triples: readonly { name: Hex; typeId: number; value: Hex }[], patch: boolean): Cell[] {
  if (triples.length > MAX_ATTRIBUTES) revert('TooManyAttributes', [BigInt(triples.length), BigInt(MAX_ATTRIBUTES)]);
  for (let i = 1; i < triples.length; i++) {
    if ((triples[i - 1]?.name ?? '') >= (triples[i]?.name ?? '')) revert('AttributesNotSorted');
  }
  return triples.map(({ name: raw, typeId, value }) => {
    const name = identName(raw);
    if (name.startsWith('$') && !SYSTEM_WRITABLE.has(name)) revert('SystemAttributeNotWritable', [raw]);
    if (typeId === TYPE_IDS.tombstone) {
      if (!patch) revert('TombstoneInCreate', [raw]);
      if (size(value) !== 0) revert('TombstoneValueNotEmpty', [raw]);
    } else if (name === '$payload') {
      if (typeId !== TYPE_IDS.bytes || size(value) > MAX_PAYLOAD_BYTES) revert('InvalidValueType', [raw, typeId]);
    } else if (name === '$contentType') {
      if (typeId !== TYPE_IDS.str || !canonicalValue(typeId, value)) revert('InvalidValueType', [raw, typeId]);
    } else if (!canonicalValue(typeId, value)) revert('InvalidValueType', [raw, typeId]);
    return { raw, name, typeId, value: value.toLowerCase() as Hex };
  });
}

/** `abi.decode` of one op's struct, refused unless re-encoding gives the same bytes (§1.3). */
function decodeCanonical<T>(tag: keyof typeof OP_STRUCTS, data: Hex): T {
  try {
    const params = OP_STRUCTS[tag];
    const [value] = decodeAbiParameters(params, data);
    if (encodeAbiParameters(params, [value] as never).toLowerCase() === data.toLowerCase()) return value as T;
  } catch {
    // Undecodable and non-canonical bytes revert alike.
  }
  return revert('NonCanonicalOperationData', [tag]);
}

/** `max(expiresAt, block + minLifetime)`, refused when it overflows or is not after the block (§1.8). */
function resolveExpiry(expiresAt: bigint, minLifetime: bigint, block: number): bigint {
  const relative = BigInt(block) + minLifetime;
  if (relative > UINT64_MAX) revert('ExpiryOverflow');
  const target = expiresAt > relative ? expiresAt : relative;
  if (target <= BigInt(block)) revert('ExpiryDeadOnArrival', [target, BigInt(block)]);
  return target;
}

/** The entity key of the `nonce`-th create of `owner` (§2). */
export function deriveEntityKey(chainId: number, owner: Address, nonce: bigint, salt: bigint): Hex {
  return keccak256(
    concat([
      numberToHex(chainId, { size: 32 }),
      REGISTRY_ADDRESS,
      owner,
      numberToHex(nonce, { size: 8 }),
      numberToHex(salt, { size: 16 }),
    ]),
  );
}

const event = (eventName: string, args: Record<string, unknown>, data: Hex = '0x'): RegistryLog => ({
  topics: encodeEventTopics({ abi: REGISTRY_ABI, eventName, args } as never) as Hex[],
  data,
});
const words = (...values: bigint[]): Hex => concat(values.map((v) => pad(numberToHex(v), { size: 32 })));

/** Gas the placeholder schedule charges (§5): the ops' cost or the calldata floor, whichever is more. */
export function gasFor(input: Hex, opCost = 0n): bigint {
  let floor = 21_000n;
  for (const byte of hexToBytes(input)) floor += byte === 0 ? 10n : 40n;
  return opCost > floor ? opCost : floor;
}

export interface Execution {
  logs: RegistryLog[];
  gasUsed: bigint;
  /** Applies the batch to the state; nothing changes before it runs. */
  commit(): void;
}

interface CreateOp {
  salt: bigint;
  expiresAt: bigint;
  minLifetime: bigint;
  creationFlags: number;
  attributes: readonly { name: Hex; typeId: number; value: Hex }[];
}
interface PatchOp {
  entityKey: Hex;
  mutations: readonly { name: Hex; typeId: number; value: Hex }[];
}
interface ExtendOp {
  entityKey: Hex;
  expiresAt: bigint;
  minLifetime: bigint;
}
interface TransferOp {
  entityKey: Hex;
  newOwner: Address;
}

/**
 * Runs an `execute` call from `sender` in block `block` against an overlay of `state`: ops in calldata
 * order, each seeing the previous ones' effects. Throws Revert on the first broken rule.
 */
export function execute(state: DbEntityState, chainId: number, sender: Address, input: Hex, block: number): Execution {
  let ops: readonly { operation: number; operationData: Hex }[];
  try {
    const call = decodeFunctionData({ abi: REGISTRY_ABI, data: input });
    if (call.functionName !== 'execute') throw new Revert(`${call.functionName} is not a transaction`, '0x');
    ops = call.args[0];
  } catch (error) {
    if (error instanceof Revert) throw error;
    throw new Revert('undecodable calldata', '0x');
  }
  if (ops.length === 0) revert('EmptyBatch');
  const overlay = new Map<Hex, DbEntity | null>();
  const creates: DbEntity[] = [];
  const logs: RegistryLog[] = [];
  let nonce = state.nonce(sender);
  let opCost = 0n;
  const current = (key: Hex): DbEntity => {
    const entity = overlay.has(key) ? overlay.get(key) : state.stored(key);
    if (!entity) revert('EntityNotFound', [key]);
    return entity;
  };
  const owned = (entity: DbEntity) => {
    if (entity.owner !== sender) revert('NotOwner', [entity.key, entity.owner, sender]);
  };
  const live = (entity: DbEntity) => {
    if (!isLive(entity, block)) revert('EntityExpired', [entity.key, entity.expiresAt]);
  };

  for (const { operation, operationData } of ops) {
    switch (operation) {
      case OP_CREATE: {
        const op = decodeCanonical<CreateOp>(OP_CREATE, operationData);
        if ((op.creationFlags & ~(FLAG_READONLY | FLAG_PERMISSIONLESS_EXTENSION)) !== 0)
          revert('ReservedCreationFlags', [op.creationFlags]);
        const cells = readCells(op.attributes, false);
        const expiresAt = resolveExpiry(op.expiresAt, op.minLifetime, block);
        const key = deriveEntityKey(chainId, sender, nonce++, op.salt);
        const system = (name: string) => cells.find((c) => c.name === name)?.value ?? '0x';
        const entity: DbEntity = {
          key,
          owner: sender,
          creator: sender,
          createdAt: block,
          updatedAt: block,
          expiresAt,
          creationFlags: op.creationFlags,
          contentType: hexToString(system('$contentType')),
          payload: system('$payload'),
          attributes: userAttributes(cells),
        };
        overlay.set(key, entity);
        creates.push(entity);
        opCost +=
          80_000n +
          16n * BigInt(size(system('$contentType')) + size(system('$payload'))) +
          5_000n * BigInt(entity.attributes.length);
        logs.push(
          event('EntityCreated', { entityKey: key, owner: sender }, words(expiresAt, BigInt(op.creationFlags))),
        );
        break;
      }
      case OP_PATCH: {
        const op = decodeCanonical<PatchOp>(OP_PATCH, operationData);
        const key = op.entityKey.toLowerCase() as Hex;
        if (op.mutations.length === 0) revert('EmptyMutations', [key]);
        const cells = readCells(op.mutations, true);
        const entity = current(key);
        owned(entity);
        live(entity);
        if (entity.creationFlags & FLAG_READONLY) revert('ReadOnlyEntity', [key]);
        const byName = new Map(entity.attributes.map((a) => [a.name, a]));
        let { contentType, payload } = entity;
        for (const cell of cells) {
          const cleared = cell.typeId === TYPE_IDS.tombstone;
          if (cell.name === '$payload') payload = cleared ? '0x' : cell.value;
          else if (cell.name === '$contentType') contentType = cleared ? '' : hexToString(cell.value);
          else if (cleared) byName.delete(cell.name);
          else byName.set(cell.name, { name: cell.name, typeId: cell.typeId, value: cell.value });
          opCost += 5_000n + 16n * BigInt(size(cell.value));
        }
        opCost += 40_000n;
        const attributes = [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
        overlay.set(key, { ...entity, contentType, payload, attributes, updatedAt: block });
        logs.push(event('EntityPatched', { entityKey: key, owner: entity.owner }));
        break;
      }
      case OP_EXTEND: {
        const op = decodeCanonical<ExtendOp>(OP_EXTEND, operationData);
        const key = op.entityKey.toLowerCase() as Hex;
        const entity = current(key);
        if (!(entity.creationFlags & FLAG_PERMISSIONLESS_EXTENSION)) owned(entity);
        live(entity);
        const expiresAt = resolveExpiry(op.expiresAt, op.minLifetime, block);
        if (expiresAt < entity.expiresAt) revert('ExpiryNotExtended', [key, entity.expiresAt, expiresAt]);
        overlay.set(key, { ...entity, expiresAt, updatedAt: block });
        opCost += 10_000n;
        logs.push(event('ExpiryExtended', { entityKey: key, owner: entity.owner }, words(expiresAt)));
        break;
      }
      case OP_TRANSFER: {
        const op = decodeCanonical<TransferOp>(OP_TRANSFER, operationData);
        const key = op.entityKey.toLowerCase() as Hex;
        const newOwner = op.newOwner.toLowerCase() as Address;
        const entity = current(key);
        owned(entity);
        live(entity);
        if (BigInt(newOwner) === 0n) revert('TransferToZeroAddress', [key]);
        if (newOwner === entity.owner) revert('TransferToSelf', [key]);
        overlay.set(key, { ...entity, owner: newOwner, updatedAt: block });
        opCost += 20_000n;
        logs.push(event('OwnershipTransferred', { entityKey: key, previousOwner: entity.owner, newOwner }));
        break;
      }
      case OP_DELETE: {
        const op = decodeCanonical<{ entityKey: Hex }>(OP_DELETE, operationData);
        const key = op.entityKey.toLowerCase() as Hex;
        // Liveness is not checked (§1.9): an expired entity can still be deleted.
        const entity = current(key);
        owned(entity);
        overlay.set(key, null);
        opCost += 10_000n;
        logs.push(event('EntityDeleted', { entityKey: key, owner: entity.owner }));
        break;
      }
      default:
        revert('InvalidOpType', [operation]);
    }
  }
  return {
    logs,
    gasUsed: gasFor(input, opCost),
    commit() {
      // Ids are assigned at commit, ascending by key among the batch's creates (§4.1).
      const created = new Set(creates.map((e) => e.key));
      const fresh = [...created].sort();
      for (const key of fresh) {
        const entity = overlay.get(key);
        if (entity) state.write(entity, block);
      }
      for (const [key, entity] of overlay) {
        if (created.has(key) && entity) continue;
        if (entity) state.write(entity, block);
        else state.remove(key, block);
      }
      state.advanceNonce(sender, creates.length);
    },
  };
}

function userAttributes(cells: readonly Cell[]): DbAttribute[] {
  return cells.filter((c) => !c.name.startsWith('$')).map(({ name, typeId, value }) => ({ name, typeId, value }));
}

/** Answers the registry's view calls (§4.5) as `eth_call` returns them. */
export function viewCall(state: DbEntityState, input: Hex, block: number): Hex | undefined {
  let call: ReturnType<typeof decodeFunctionData<typeof REGISTRY_ABI>>;
  try {
    call = decodeFunctionData({ abi: REGISTRY_ABI, data: input });
  } catch {
    return undefined;
  }
  switch (call.functionName) {
    case 'entityNonce':
      return encodeParams([{ type: 'uint64' }], [state.nonce(call.args[0].toLowerCase() as Address)]);
    case 'customAttributeNames': {
      const entity = state.stored(call.args[0].toLowerCase() as Hex);
      const names = entity && isLive(entity, block) ? entity.attributes.map((a) => identHex(a.name)) : [];
      return encodeParams([{ type: 'bytes32[]' }], [names]);
    }
    case 'attributeTypeId': {
      const entity = state.stored(call.args[0].toLowerCase() as Hex);
      const name = identText(call.args[1]);
      const typeId =
        entity && isLive(entity, block) ? (entity.attributes.find((a) => a.name === name)?.typeId ?? 0) : 0;
      return encodeParams([{ type: 'uint8' }], [typeId]);
    }
    default:
      return undefined;
  }
}

const identHex = (name: string): Hex => pad(bytesToHex(new TextEncoder().encode(name)), { dir: 'right', size: 32 });
const identText = (raw: Hex): string => hexToString(raw).replace(/\0+$/, '');
