// A DB-chain writer that is not ours: `execute` calldata built with viem alone from the reference
// (arkiv-gen-d.md §1.2–§1.8, §3), never with the driver's encoder, signed and sent raw. The suites that
// must hold on both generations write through it, so a driver encoding bug cannot hide behind an oracle
// that shares it; it also sends what our writer would refuse but the chain accepts (hostile entities).
import { encodeAbiParameters, encodeFunctionData, parseAbi, parseAbiParameters, toHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { Devnet } from '../../src/devnet/index.ts';
import { defined } from './defined.ts';
import { rpcResult } from './devnet.ts';

export const REGISTRY = '0x4400000000000000000000000000000000000044';
const abi = parseAbi(['function execute((uint8 operation, bytes operationData)[] ops) returns (bytes32[] keys)']);
const ATTRIBUTES = '(bytes32 name, uint8 typeId, bytes value)[]';
const STRUCTS = {
  create: parseAbiParameters(
    `(uint128 salt, uint64 expiresAt, uint64 minLifetime, uint8 creationFlags, ${ATTRIBUTES} attributes)`,
  ),
  patch: parseAbiParameters(`(bytes32 entityKey, ${ATTRIBUTES} mutations)`),
  extend: parseAbiParameters('(bytes32 entityKey, uint64 expiresAt, uint64 minLifetime)'),
  transfer: parseAbiParameters('(bytes32 entityKey, address newOwner)'),
  delete: parseAbiParameters('(bytes32 entityKey)'),
};
/** topic0 of EntityCreated (§3). */
export const ENTITY_CREATED = '0xb282d7c494b8899aa8015cd07be621530beb03409eb8c5e8fdc1411ba64356a5';

export type Cell = { name: Hex; typeId: number; value: Hex };
export type Op = { operation: number; operationData: Hex };

const ident = (n: string) => toHex(n, { size: 32 });
const word = (v: bigint) => toHex(BigInt.asUintN(256, v), { size: 32 });
/** Typed cells (§1.5): each value in its canonical wire form. */
export const cell = {
  str: (n: string, v: string): Cell => ({ name: ident(n), typeId: 8, value: toHex(v) }),
  i32: (n: string, v: number | bigint): Cell => ({ name: ident(n), typeId: 2, value: word(BigInt(v)) }),
  u64: (n: string, v: number | bigint): Cell => ({ name: ident(n), typeId: 3, value: word(BigInt(v)) }),
  bool: (n: string, v: boolean): Cell => ({ name: ident(n), typeId: 1, value: word(v ? 1n : 0n) }),
  u256: (n: string, v: bigint): Cell => ({ name: ident(n), typeId: 4, value: word(v) }),
  dec: (n: string, scaled: bigint): Cell => ({ name: ident(n), typeId: 5, value: word(scaled) }),
  addr: (n: string, a: Hex): Cell => ({ name: ident(n), typeId: 9, value: word(BigInt(a)) }),
  tombstone: (n: string): Cell => ({ name: ident(n), typeId: 0, value: '0x' }),
  payload: (bytes: Uint8Array): Cell => ({ name: ident('$payload'), typeId: 7, value: toHex(bytes) }),
  contentType: (v: string): Cell => ({ name: ident('$contentType'), typeId: 8, value: toHex(v) }),
};
/** Triples strictly ascending by the raw 32-byte name (§1.6); lowercase hex compares as the bytes do. */
const sorted = (cells: Cell[]) => [...cells].sort((a, b) => (a.name < b.name ? -1 : 1));

/** The schema-v1 attribute list (DESIGN §4 numeric forms) as the typed cells ARCHITECTURE.md §8.3 maps them to. */
export function schemaCells(
  attributes: { key: string; value: string | number | bigint; type?: 'i32' | 'bool' | 'u64' }[],
): Cell[] {
  return attributes.map((a) => {
    if (typeof a.value === 'string') return cell.str(a.key, a.value);
    const v = BigInt(a.value);
    if (a.type === 'i32') return cell.i32(a.key, v - 2n ** 31n);
    if (a.type === 'bool') return cell.bool(a.key, v === 1n);
    return cell.u64(a.key, v);
  });
}

export const op = {
  /** A create with a relative lifetime (`expiresAt` 0, `minLifetime` blocks), flags 0 unless given. */
  create: (
    salt: bigint,
    contentType: string,
    payload: Uint8Array,
    cells: Cell[],
    lifetime = 1_000_000n,
    creationFlags = 0,
  ): Op => ({
    operation: 1,
    operationData: encodeAbiParameters(STRUCTS.create, [
      {
        salt,
        expiresAt: 0n,
        minLifetime: lifetime,
        creationFlags,
        attributes: sorted([cell.contentType(contentType), cell.payload(payload), ...cells]),
      },
    ]),
  }),
  patch: (entityKey: Hex, mutations: Cell[]): Op => ({
    operation: 2,
    operationData: encodeAbiParameters(STRUCTS.patch, [{ entityKey, mutations: sorted(mutations) }]),
  }),
  /** An extend to `max(expiresAt, block + minLifetime)` (§1.8). */
  extend: (entityKey: Hex, expiresAt: bigint, minLifetime: bigint): Op => ({
    operation: 3,
    operationData: encodeAbiParameters(STRUCTS.extend, [{ entityKey, expiresAt, minLifetime }]),
  }),
  transfer: (entityKey: Hex, newOwner: Hex): Op => ({
    operation: 4,
    operationData: encodeAbiParameters(STRUCTS.transfer, [{ entityKey, newOwner }]),
  }),
  delete: (entityKey: Hex): Op => ({
    operation: 5,
    operationData: encodeAbiParameters(STRUCTS.delete, [{ entityKey }]),
  }),
};

/** `execute(ops)` calldata. */
export const executeData = (ops: Op[]): Hex => encodeFunctionData({ abi, functionName: 'execute', args: [ops] });

let salts = 0n;
/** A fresh salt per create in this process (uniqueness comes from the entity nonce; the salt varies the key anyway). */
export const nextSalt = () => ++salts;

/**
 * Signs `execute(ops)` from dev account `from` and sends it raw (no wait for mining: the devnet's automine
 * decides); resolves to the tx hash.
 */
export async function sendExecute(devnet: Devnet, from: number, ops: Op[], gas = 30_000_000n): Promise<Hex> {
  const account = privateKeyToAccount(defined(devnet.accounts[from], `dev account ${from}`).privateKey);
  const nonce = await rpcResult<Hex>(devnet, 'eth_getTransactionCount', [account.address, 'pending']);
  const raw = await account.signTransaction({
    type: 'eip1559',
    chainId: devnet.chainId,
    nonce: Number(BigInt(nonce)),
    to: REGISTRY,
    data: executeData(ops),
    gas,
    maxFeePerGas: 3_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
  });
  return rpcResult<Hex>(devnet, 'eth_sendRawTransaction', [raw]);
}

/** The mined receipt of `hash`: its status and the keys of the entities it created, in op order. */
export async function receiptOf(devnet: Devnet, hash: Hex): Promise<{ ok: boolean; created: Hex[] }> {
  const receipt = await rpcResult<{ status: Hex; logs: { topics: Hex[] }[] } | null>(
    devnet,
    'eth_getTransactionReceipt',
    [hash],
  );
  const mined = defined(receipt ?? undefined, `receipt of ${hash}`);
  return {
    ok: mined.status === '0x1',
    created: mined.logs
      .filter((l) => l.topics[0] === ENTITY_CREATED)
      .map((l) => defined(l.topics[1], 'the entity key of an EntityCreated log')),
  };
}

/** Sends `execute(ops)` and waits for its receipt (the devnet automines); throws unless it succeeded. */
export async function execute(devnet: Devnet, from: number, ops: Op[], gas?: bigint): Promise<Hex[]> {
  const outcome = await receiptOf(devnet, await sendExecute(devnet, from, ops, gas));
  if (!outcome.ok) throw new Error(`execute from account ${from} reverted`);
  return outcome.created;
}
