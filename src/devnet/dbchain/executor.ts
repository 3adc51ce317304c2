// The DB-chain executor's rules (arkiv-gen-d.md §1) over the devnet's entity state. The codec
// (src/chain/dbchain) decodes `execute` calldata the node's way (canonical bytes, cell and list rules,
// flags); this adds what needs state: the per-op auth/liveness table (§1.9), expiry resolution, all-or-
// nothing batches in calldata order, the entity nonce, the five events and gas. A broken rule throws a
// Revert carrying the custom error's ABI bytes, as the node's revert data.
import { decodeFunctionData, encodeAbiParameters, hexToBytes, toHex, type Address, type Hex } from 'viem';
import {
  CONTENT_TYPE_CELL,
  CREATION_FLAGS,
  DbChainCodecError,
  PAYLOAD_CELL,
  PAYLOAD_MAX_BYTES,
  STR_VALUE_MAX_BYTES,
  TYPE_IDS,
  decodeOperation,
  decodeWireExecute,
  encodeName,
  encodeRegistryError,
  encodeRegistryEvent,
  encodeRevertReason,
  entityKey,
  expiryOverflowReason,
  registryAbi,
  resolveExpiry,
  splitCreateCells,
  type Cell,
  type EventLog,
  type RegistryErrorName,
  type RegistryOperation,
} from '../../chain/dbchain/index.ts';
import { flatHex } from '../transactions.ts';
import { isLive, type DbEntity, type DbEntityState } from './state.ts';

/** A reverted execution: `data` is the custom error as the node returns it ('0x' when there is none). */
export class Revert extends Error {
  constructor(
    readonly errorName: string,
    readonly data: Hex,
  ) {
    super(`execution reverted: ${errorName}`);
  }
}

function revert(name: RegistryErrorName, args: readonly unknown[] = []): never {
  throw new Revert(name, encodeRegistryError({ name, args }));
}

/** The node's revert for what the codec refused. */
function codecRevert(error: DbChainCodecError, wire: { operationData: Hex }[]): Revert {
  if (error.revert) return new Revert(error.revert.name, encodeRegistryError(error.revert));
  if (error.code === 'ValueTooLong') return overLong(wire) ?? new Revert(error.code, '0x');
  return new Revert(error.code, '0x');
}

/**
 * Workaround (codec-bugs.md 1): the codec refuses an over-long str or payload without the node's revert,
 * InvalidValueType(name, typeId); find the first such cell in the raw operations.
 */
function overLong(wire: { operationData: Hex }[]): Revert | undefined {
  for (const { operationData } of wire) {
    const bytes = hexToBytes(operationData);
    for (let at = 0; at + 96 <= bytes.length; at += 32) {
      const typeId = bytes[at + 63];
      if (typeId !== TYPE_IDS.str && typeId !== TYPE_IDS.bytes) continue;
      const limit = typeId === TYPE_IDS.str ? STR_VALUE_MAX_BYTES : PAYLOAD_MAX_BYTES;
      const length = Number(BigInt(toHex(bytes.subarray(at + 96, at + 128))));
      if (length > limit && at + 128 <= bytes.length) {
        const name = toHex(bytes.subarray(at, at + 32));
        return new Revert('InvalidValueType', encodeRegistryError({ name: 'InvalidValueType', args: [name, typeId] }));
      }
    }
  }
  return undefined;
}

/** Gas the placeholder schedule charges (§5): the ops' cost or the calldata floor, whichever is more. */
export function gasFor(input: Hex, opCost = 0n): bigint {
  let floor = 21_000n;
  for (const byte of hexToBytes(input)) floor += byte === 0 ? 10n : 40n;
  return opCost > floor ? opCost : floor;
}

export interface Execution {
  logs: EventLog[];
  gasUsed: bigint;
  /** Applies the batch to the state; nothing changes before it runs. */
  commit(): void;
}

const storageLength = (cell: Cell): number =>
  cell.type === 'tombstone'
    ? 0
    : cell.type === 'str'
      ? new TextEncoder().encode(cell.value).length
      : cell.type === 'bytes'
        ? cell.value.length
        : 32;

/** The decoded operations of `execute` calldata, or the revert the node gives for them. */
function decodeBatch(input: Hex): RegistryOperation[] {
  let wire: { operation: number; operationData: Hex }[] = [];
  try {
    wire = decodeWireExecute(input);
    return wire.map(decodeOperation);
  } catch (error) {
    if (error instanceof DbChainCodecError) throw codecRevert(error, wire);
    throw error;
  }
}

function expiry(fields: { expiresAt: bigint; minLifetime: bigint }, block: number): bigint {
  try {
    return resolveExpiry(fields, BigInt(block));
  } catch (error) {
    // No custom error for it: the node reverts with Error(string) (expiryOverflowReason).
    if (error instanceof DbChainCodecError && error.code === 'InvalidExpiry') {
      const reason = expiryOverflowReason(BigInt(block), fields.minLifetime);
      throw new Revert(reason, encodeRevertReason(reason));
    }
    if (error instanceof DbChainCodecError) throw codecRevert(error, []);
    throw error;
  }
}

/**
 * Runs an `execute` call from `sender` in block `block` against an overlay of `state`: ops in calldata
 * order, each seeing the previous ones' effects. Throws Revert on the first broken rule.
 */
export function execute(state: DbEntityState, chainId: number, sender: Address, input: Hex, block: number): Execution {
  const ops = decodeBatch(input);
  const overlay = new Map<Hex, DbEntity | null>();
  const created: Hex[] = [];
  const logs: EventLog[] = [];
  let nonce = state.nonce(sender);
  let opCost = 0n;
  const current = (key: Hex): DbEntity => {
    const entity = overlay.has(key) ? overlay.get(key) : state.stored(key);
    if (!entity) revert('EntityNotFound', [key]);
    return entity;
  };
  const owned = (entity: DbEntity) => {
    if (entity.owner !== sender) revert('NotOwner', [entity.key, sender, entity.owner]);
  };
  const live = (entity: DbEntity) => {
    if (!isLive(entity, block)) revert('EntityExpired', [entity.key, entity.expiresAt]);
  };

  for (const op of ops) {
    switch (op.op) {
      case 'create': {
        const expiresAt = expiry(op, block);
        const key = entityKey({ chainId, owner: sender, nonce: nonce++, salt: op.salt });
        const { payload, contentType, attributes } = splitCreateCells(op.attributes);
        overlay.set(key, {
          key,
          owner: sender,
          creator: sender,
          createdAt: block,
          updatedAt: block,
          expiresAt,
          creationFlags: op.creationFlags,
          contentType,
          payload: flatHex(payload),
          attributes,
        });
        created.push(key);
        opCost += 80_000n + 16n * BigInt(new TextEncoder().encode(contentType).length + payload.length);
        opCost += 5_000n * BigInt(attributes.length);
        logs.push(
          encodeRegistryEvent({
            event: 'created',
            entityKey: key,
            owner: sender,
            expiresAt,
            creationFlags: op.creationFlags,
          }),
        );
        break;
      }
      case 'patch': {
        const entity = current(op.entityKey);
        owned(entity);
        live(entity);
        if (entity.creationFlags & CREATION_FLAGS.readonly) revert('ReadOnlyEntity', [entity.key]);
        const byName = new Map(entity.attributes.map((a) => [a.name, a]));
        let { contentType, payload } = entity;
        for (const cell of op.mutations) {
          if (cell.name === PAYLOAD_CELL) payload = cell.type === 'bytes' ? flatHex(cell.value) : '0x';
          else if (cell.name === CONTENT_TYPE_CELL) contentType = cell.type === 'str' ? cell.value : '';
          else if (cell.type === 'tombstone') byName.delete(cell.name);
          else byName.set(cell.name, cell);
          opCost += 5_000n + 16n * BigInt(storageLength(cell));
        }
        opCost += 40_000n;
        // User names are ASCII, so comparing them as strings orders them as their bytes32 words.
        const attributes = [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
        overlay.set(entity.key, { ...entity, contentType, payload, attributes, updatedAt: block });
        logs.push(encodeRegistryEvent({ event: 'patched', entityKey: entity.key, owner: entity.owner }));
        break;
      }
      case 'extend': {
        const entity = current(op.entityKey);
        if (!(entity.creationFlags & CREATION_FLAGS.permissionlessExtension)) owned(entity);
        live(entity);
        const expiresAt = expiry(op, block);
        if (expiresAt < entity.expiresAt) revert('ExpiryNotExtended', [entity.key, expiresAt, entity.expiresAt]);
        overlay.set(entity.key, { ...entity, expiresAt, updatedAt: block });
        opCost += 10_000n;
        logs.push(encodeRegistryEvent({ event: 'extended', entityKey: entity.key, owner: entity.owner, expiresAt }));
        break;
      }
      case 'transfer': {
        const entity = current(op.entityKey);
        owned(entity);
        live(entity);
        if (BigInt(op.newOwner) === 0n) revert('TransferToZeroAddress', [entity.key]);
        if (op.newOwner === entity.owner) revert('TransferToSelf', [entity.key]);
        overlay.set(entity.key, { ...entity, owner: op.newOwner, updatedAt: block });
        opCost += 20_000n;
        logs.push(
          encodeRegistryEvent({
            event: 'transferred',
            entityKey: entity.key,
            previousOwner: entity.owner,
            newOwner: op.newOwner,
          }),
        );
        break;
      }
      case 'delete': {
        // Liveness is not checked (§1.9): an expired entity can still be deleted.
        const entity = current(op.entityKey);
        owned(entity);
        overlay.set(entity.key, null);
        opCost += 10_000n;
        logs.push(encodeRegistryEvent({ event: 'deleted', entityKey: entity.key, owner: entity.owner }));
        break;
      }
    }
  }
  return {
    logs,
    gasUsed: gasFor(input, opCost),
    commit() {
      // Ids are assigned at commit, ascending by key among the batch's creates (§4.1).
      for (const key of [...created].sort()) {
        const entity = overlay.get(key);
        if (entity) state.write(entity, block);
      }
      for (const [key, entity] of overlay) {
        if (entity && created.includes(key)) continue;
        if (entity) state.write(entity, block);
        else state.remove(key, block);
      }
      state.advanceNonce(sender, created.length);
    },
  };
}

/** Answers the registry's view calls (§4.5) as `eth_call` returns them; undefined for other calldata. */
export function viewCall(state: DbEntityState, input: Hex, block: number): Hex | undefined {
  let call: ReturnType<typeof decodeFunctionData<typeof registryAbi>>;
  try {
    call = decodeFunctionData({ abi: registryAbi, data: input });
  } catch {
    return undefined;
  }
  const liveEntity = (key: Hex) => {
    const entity = state.stored(key.toLowerCase() as Hex);
    return entity && isLive(entity, block) ? entity : undefined;
  };
  switch (call.functionName) {
    case 'entityNonce':
      return encodeAbiParameters([{ type: 'uint64' }], [state.nonce(call.args[0].toLowerCase() as Address)]);
    case 'customAttributeNames': {
      const names = liveEntity(call.args[0])?.attributes.map((a) => encodeName(a.name, false)) ?? [];
      return encodeAbiParameters([{ type: 'bytes32[]' }], [names]);
    }
    case 'attributeTypeId': {
      const name = toHex(hexToBytes(call.args[1]).filter((b) => b !== 0));
      const cell = liveEntity(call.args[0])?.attributes.find((a) => toHex(a.name) === name);
      return encodeAbiParameters([{ type: 'uint8' }], [cell ? TYPE_IDS[cell.type] : 0]);
    }
    default:
      return undefined;
  }
}
