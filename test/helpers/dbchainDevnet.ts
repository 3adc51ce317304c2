// Test fixtures for the DB-chain devnet: raw `execute` calldata built with viem alone from the reference
// (arkiv-gen-d.md §1), so the devnet is checked against the wire rather than against our own encoder, and
// a sender that signs and mines one registry transaction at a time.
import {
  createPublicClient,
  createWalletClient,
  decodeFunctionResult,
  encodeAbiParameters,
  encodeFunctionData,
  http,
  toHex,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { localhost } from 'viem/chains';
import {
  OPERATION_STRUCTS,
  REGISTRY_ADDRESS,
  TYPE_IDS,
  entityKey,
  registryAbi,
} from '../../src/chain/dbchain/index.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import { defined } from './defined.ts';
import { rpcResult } from './devnet.ts';

export interface Triple {
  name: Hex;
  typeId: number;
  value: Hex;
}

export const ident = (name: string): Hex => toHex(name, { size: 32 });
const word = (value: bigint) => toHex(BigInt.asUintN(256, value), { size: 32 });

/** Typed cells as §1.5 encodes them; `str` and `bytes` unpadded, the rest one word. */
export const cell = {
  str: (name: string, value: string): Triple => ({ name: ident(name), typeId: TYPE_IDS.str, value: toHex(value) }),
  i32: (name: string, value: number): Triple => ({
    name: ident(name),
    typeId: TYPE_IDS.i32,
    value: word(BigInt(value)),
  }),
  u64: (name: string, value: bigint): Triple => ({ name: ident(name), typeId: TYPE_IDS.u64, value: word(value) }),
  u256: (name: string, value: bigint): Triple => ({ name: ident(name), typeId: TYPE_IDS.u256, value: word(value) }),
  dec: (name: string, scaled: bigint): Triple => ({ name: ident(name), typeId: TYPE_IDS.dec, value: word(scaled) }),
  bool: (name: string, value: boolean): Triple => ({
    name: ident(name),
    typeId: TYPE_IDS.bool,
    value: word(value ? 1n : 0n),
  }),
  addr: (name: string, value: Hex): Triple => ({
    name: ident(name),
    typeId: TYPE_IDS.addr,
    value: word(BigInt(value)),
  }),
  bytes32: (name: string, value: Hex): Triple => ({ name: ident(name), typeId: TYPE_IDS.bytes32, value }),
  key: (name: string, value: Hex): Triple => ({ name: ident(name), typeId: TYPE_IDS.key, value }),
  tombstone: (name: string): Triple => ({ name: ident(name), typeId: TYPE_IDS.tombstone, value: '0x' }),
  payload: (value: string): Triple => ({ name: ident('$payload'), typeId: TYPE_IDS.bytes, value: toHex(value) }),
  contentType: (value: string): Triple => ({ name: ident('$contentType'), typeId: TYPE_IDS.str, value: toHex(value) }),
};

/** Sorts triples by their raw name, as the node requires (§1.6). */
export const sorted = (triples: Triple[]): Triple[] => [...triples].sort((a, b) => (a.name < b.name ? -1 : 1));

export const createData = (fields: {
  salt?: bigint;
  expiresAt?: bigint;
  minLifetime?: bigint;
  creationFlags?: number;
  attributes: Triple[];
}): Hex =>
  encodeAbiParameters(OPERATION_STRUCTS.create, [
    {
      salt: fields.salt ?? 0n,
      expiresAt: fields.expiresAt ?? 0n,
      minLifetime: fields.minLifetime ?? 100n,
      creationFlags: fields.creationFlags ?? 0,
      attributes: fields.attributes,
    },
  ]);
export const patchData = (entityKey: Hex, mutations: Triple[]): Hex =>
  encodeAbiParameters(OPERATION_STRUCTS.patch, [{ entityKey, mutations }]);
export const extendData = (entityKey: Hex, expiresAt: bigint, minLifetime: bigint): Hex =>
  encodeAbiParameters(OPERATION_STRUCTS.extend, [{ entityKey, expiresAt, minLifetime }]);
export const transferData = (entityKey: Hex, newOwner: Hex): Hex =>
  encodeAbiParameters(OPERATION_STRUCTS.transfer, [{ entityKey, newOwner }]);
export const deleteData = (entityKey: Hex): Hex => encodeAbiParameters(OPERATION_STRUCTS.delete, [{ entityKey }]);

export const executeData = (ops: { operation: number; operationData: Hex }[]): Hex =>
  encodeFunctionData({ abi: registryAbi, functionName: 'execute', args: [ops] });

/** A plain entity body: content type, payload and the given user cells, sorted. */
export const body = (payload: string, ...user: Triple[]): Triple[] =>
  sorted([cell.contentType('text/plain'), cell.payload(payload), ...user]);

export function dbchainClients(devnet: Devnet, accountIndex = 0) {
  const chain = { ...localhost, id: devnet.chainId };
  const account = privateKeyToAccount(defined(devnet.accounts[accountIndex], 'devnet account').privateKey);
  const reader = createPublicClient({ chain, transport: http(devnet.url) });
  const wallet = createWalletClient({ chain, transport: http(devnet.url), account });
  return {
    account,
    reader,
    /** Signs and sends `data` to the registry with fixed gas (no estimate, so a revert is mined); waits for the receipt. */
    async send(data: Hex, gas = 3_000_000n) {
      const hash = await wallet.sendTransaction({ to: REGISTRY_ADDRESS, data, gas, chain });
      return reader.waitForTransactionReceipt({ hash, pollingInterval: 20 });
    },
  };
}

/** The registry's entity nonce of `address`, read with the `entityNonce` view call. */
export async function entityNonce(devnet: Devnet, address: Hex): Promise<bigint> {
  const data = encodeFunctionData({ abi: registryAbi, functionName: 'entityNonce', args: [address] });
  const result = await rpcResult<Hex>(devnet, 'eth_call', [{ to: REGISTRY_ADDRESS, data }, 'latest']);
  return decodeFunctionResult({ abi: registryAbi, functionName: 'entityNonce', data: result });
}

let nextSalt = 1n;
/** Creates one entity from `who` and returns its key, predicted from the nonce and salt and checked against the log. */
export async function createEntity(
  devnet: Devnet,
  who: ReturnType<typeof dbchainClients>,
  fields: Parameters<typeof createData>[0],
): Promise<{ key: Hex; block: bigint }> {
  const salt = nextSalt++;
  const owner = who.account.address.toLowerCase() as Hex;
  const key = entityKey({ chainId: devnet.chainId, owner, nonce: await entityNonce(devnet, owner), salt });
  const receipt = await who.send(executeData([{ operation: 1, operationData: createData({ ...fields, salt }) }]));
  if (receipt.status !== 'success' || receipt.logs[0]?.topics[1] !== key)
    throw new Error(`create from ${owner} did not log the predicted key ${key}`);
  return { key, block: receipt.blockNumber };
}
