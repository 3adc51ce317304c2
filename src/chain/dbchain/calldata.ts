// `execute((uint8,bytes)[])` calldata both ways (reference/arkiv-gen-d.md §1.2–§1.3). Encoding checks
// every cell and list rule first; decoding is strict the way the node is: the outer call and each
// `operationData` must re-encode to exactly the bytes given (else NonCanonicalOperationData), then the
// same cell and list rules apply. The devnet executes what `decodeExecute` returns; the block decoder
// skips and counts what it refuses.
import { concat, decodeAbiParameters, encodeAbiParameters, hexToBytes, slice, type Address, type Hex } from 'viem';
import { AbiLayoutError, checkCanonicalLayout } from './abiLayout.ts';
import { OPERATION_KINDS, OPERATION_STRUCTS, OPERATION_TAGS, SELECTORS, type OperationKind } from './abi.ts';
import {
  checkCellList,
  checkCreationFlags,
  checkExpiryFields,
  decodeCell,
  encodeCell,
  type Cell,
  type ExpiryFields,
  type WireCell,
} from './attributes.ts';
import { DbChainCodecError, refuse } from './errors.ts';

/** One registry operation, decoded. Cells are in wire order (sorted); a create's include its system cells. */
export type RegistryOperation =
  | ({ op: 'create'; salt: bigint; creationFlags: number; attributes: Cell[] } & ExpiryFields)
  | { op: 'patch'; entityKey: Hex; mutations: Cell[] }
  | ({ op: 'extend'; entityKey: Hex } & ExpiryFields)
  | { op: 'transfer'; entityKey: Hex; newOwner: Address }
  | { op: 'delete'; entityKey: Hex };

/** One `execute` element as it is on the wire. */
export interface WireOperation {
  operation: number;
  operationData: Hex;
}

const U128_MAX = (1n << 128n) - 1n;
const KEY_PATTERN = /^0x[0-9a-f]{64}$/;
const OUTER = [{ type: 'tuple[]', components: [{ type: 'uint8' }, { type: 'bytes' }] }] as const;

function checkKey(key: Hex, op: OperationKind): Hex {
  const lower = key.toLowerCase() as Hex;
  if (!KEY_PATTERN.test(lower))
    throw new DbChainCodecError('ValueOutOfRange', `${op}: entity key ${key} is not 32 bytes`);
  return lower;
}

/** Cells on the wire in the order given (the caller sorts); the list rules are checked on the result. */
function wireCells(cells: readonly Cell[], where: 'create' | 'patch', strict: boolean): WireCell[] {
  const wire = cells.map((cell) => encodeCell(cell, strict));
  checkCellList(wire, where);
  return wire;
}

/**
 * The `operationData` bytes of one operation.
 * @param strict apply our writer's name rules too (reserved words, `--`); the devnet re-encodes with false
 */
export function encodeOperation(op: RegistryOperation, strict = true): WireOperation {
  const operation = OPERATION_TAGS[op.op];
  const data = (() => {
    switch (op.op) {
      case 'create':
        if (op.salt < 0n || op.salt > U128_MAX)
          throw new DbChainCodecError('ValueOutOfRange', `create: salt ${op.salt} is outside uint128`);
        checkExpiryFields(op);
        return encodeAbiParameters(OPERATION_STRUCTS.create, [
          {
            salt: op.salt,
            expiresAt: op.expiresAt,
            minLifetime: op.minLifetime,
            creationFlags: checkCreationFlags(op.creationFlags),
            attributes: wireCells(op.attributes, 'create', strict),
          },
        ]);
      case 'patch':
        if (op.mutations.length === 0)
          refuse('EmptyMutations', `patch of ${op.entityKey} changes nothing`, [checkKey(op.entityKey, 'patch')]);
        return encodeAbiParameters(OPERATION_STRUCTS.patch, [
          { entityKey: checkKey(op.entityKey, 'patch'), mutations: wireCells(op.mutations, 'patch', strict) },
        ]);
      case 'extend':
        checkExpiryFields(op);
        return encodeAbiParameters(OPERATION_STRUCTS.extend, [
          { entityKey: checkKey(op.entityKey, 'extend'), expiresAt: op.expiresAt, minLifetime: op.minLifetime },
        ]);
      case 'transfer':
        return encodeAbiParameters(OPERATION_STRUCTS.transfer, [
          { entityKey: checkKey(op.entityKey, 'transfer'), newOwner: op.newOwner },
        ]);
      case 'delete':
        return encodeAbiParameters(OPERATION_STRUCTS.delete, [{ entityKey: checkKey(op.entityKey, 'delete') }]);
    }
  })();
  return { operation, operationData: data };
}

/**
 * `execute` calldata for a batch (applied in this order, all or nothing).
 * @throws DbChainCodecError for an empty batch or any cell, list, flag or expiry rule
 * @example encodeExecute([{ op: 'delete', entityKey: '0xbc77…a61c' }]) // '0x49650044…'
 */
export function encodeExecute(ops: readonly RegistryOperation[], strict = true): Hex {
  if (ops.length === 0) refuse('EmptyBatch', 'a batch needs at least one operation');
  return encodeWireExecute(ops.map((op) => encodeOperation(op, strict)));
}

/** `execute` calldata around operations already encoded. */
export function encodeWireExecute(ops: readonly WireOperation[]): Hex {
  return concat([
    SELECTORS.execute,
    encodeAbiParameters(OUTER, [ops.map((o) => [o.operation, o.operationData] as const)]),
  ]);
}

/**
 * The operations of `execute` calldata, by the node's rules: selector, canonical outer encoding, known
 * tags, canonical `operationData`, then each op's cell and field rules.
 * @throws DbChainCodecError NotExecuteCalldata, EmptyBatch, InvalidOpType, NonCanonicalOperationData, and every cell rule
 */
export function decodeExecute(calldata: Hex): RegistryOperation[] {
  return decodeWireExecute(calldata).map(decodeOperation);
}

/** The outer layer only: each op's tag and data bytes (canonical outer encoding checked). */
export function decodeWireExecute(calldata: Hex): WireOperation[] {
  const input = calldata.toLowerCase() as Hex;
  if (input.length < 10 || slice(input, 0, 4) !== SELECTORS.execute)
    throw new DbChainCodecError('NotExecuteCalldata', 'calldata does not call execute((uint8,bytes)[])');
  let decoded: readonly (readonly [number, Hex])[];
  try {
    const bytes = hexToBytes(slice(input, 4));
    checkCanonicalLayout(OUTER, bytes);
    [decoded] = decodeAbiParameters(OUTER, bytes) as unknown as [readonly (readonly [number, Hex])[]];
  } catch (error) {
    // Laid out in full but not canonically: the node's own refusal (shared tails are never decoded).
    if (error instanceof AbiLayoutError && !error.truncated)
      refuse('NonCanonicalOperationData', `execute calldata is not the canonical ABI layout: ${error.message}`, [0]);
    throw new DbChainCodecError(
      'NotExecuteCalldata',
      `execute calldata does not decode: ${(error as Error).message.split('\n', 1)[0]}`,
    );
  }
  const ops = decoded.map(([operation, operationData]) => ({ operation, operationData }));
  let canonical = false;
  try {
    canonical = encodeWireExecute(ops) === input;
  } catch {
    // A uint8 tag word with higher bits decodes but does not encode back: not canonical either.
  }
  if (!canonical) {
    // The outer array is the node's to decode too; its non-canonical form names the first op's tag.
    refuse('NonCanonicalOperationData', 'execute calldata is not the canonical ABI encoding of its operations', [
      ops[0]?.operation ?? 0,
    ]);
  }
  if (ops.length === 0) refuse('EmptyBatch', 'a batch needs at least one operation');
  return ops;
}

/**
 * One operation from its tag and data: decoded, re-encoded and compared (a mismatch is
 * NonCanonicalOperationData), then checked.
 */
export function decodeOperation(wire: WireOperation): RegistryOperation {
  const kind = OPERATION_KINDS[wire.operation];
  if (kind === undefined)
    refuse('InvalidOpType', `operation tag ${wire.operation} is none of create, patch, extend, transfer, delete`, [
      wire.operation,
    ]);
  const nonCanonical = () =>
    refuse('NonCanonicalOperationData', `${kind} operation data is not its canonical ABI encoding`, [wire.operation]);
  let raw: unknown;
  let canonical = false;
  try {
    const bytes = hexToBytes(wire.operationData);
    checkCanonicalLayout(OPERATION_STRUCTS[kind], bytes);
    [raw] = decodeAbiParameters(OPERATION_STRUCTS[kind], bytes);
    // Inside the try: viem decodes a uintN word with bits above N, then refuses to encode it back.
    canonical = encodeAbiParameters(OPERATION_STRUCTS[kind], [raw] as never) === wire.operationData.toLowerCase();
  } catch {
    nonCanonical();
  }
  if (!canonical) nonCanonical();
  const cells = (list: readonly WireCell[], where: 'create' | 'patch') => {
    checkCellList(list, where);
    return list.map(decodeCell);
  };
  switch (kind) {
    case 'create': {
      const r = raw as {
        salt: bigint;
        expiresAt: bigint;
        minLifetime: bigint;
        creationFlags: number;
        attributes: readonly WireCell[];
      };
      return {
        op: 'create',
        salt: r.salt,
        expiresAt: r.expiresAt,
        minLifetime: r.minLifetime,
        creationFlags: checkCreationFlags(r.creationFlags),
        attributes: cells(r.attributes, 'create'),
      };
    }
    case 'patch': {
      const r = raw as { entityKey: Hex; mutations: readonly WireCell[] };
      if (r.mutations.length === 0) refuse('EmptyMutations', `patch of ${r.entityKey} changes nothing`, [r.entityKey]);
      return { op: 'patch', entityKey: r.entityKey, mutations: cells(r.mutations, 'patch') };
    }
    case 'extend': {
      const r = raw as { entityKey: Hex; expiresAt: bigint; minLifetime: bigint };
      return { op: 'extend', entityKey: r.entityKey, expiresAt: r.expiresAt, minLifetime: r.minLifetime };
    }
    case 'transfer': {
      const r = raw as { entityKey: Hex; newOwner: Address };
      return { op: 'transfer', entityKey: r.entityKey, newOwner: r.newOwner.toLowerCase() as Address };
    }
    case 'delete':
      return { op: 'delete', entityKey: (raw as { entityKey: Hex }).entityKey };
  }
}
