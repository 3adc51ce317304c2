// The DB-chain ChainWriter: a batch becomes one `execute` call to the registry, through the shared signer
// (ordered queue, nonces, receipts). Creates get random salts and keys predicted from the entity nonce
// (`entityNonce(address)`), so `wait: none` knows its keys. An update (full replace) is a patch setting
// the payload, content type and every attribute and tombstoning the ones that went (the entity read at the
// tip says which), plus an extend to the new lifetime unless that would shorten it (the node never
// shortens); an extend by n blocks is an absolute expiry (current + n). Everything the chain forbids is
// refused before signing; a revert is reported with the custom error it names.
import type { Address, Hex } from 'viem';
import { InvalidArgumentError } from '../../collections/index.ts';
import { type EntityBatch, PERMANENT_BTL, type UpdateOp } from '../operations.ts';
import { getBlockNumber } from '../headReads.ts';
import { createWriterSender, type WriterOptions } from '../signer.ts';
import { EntityNotLiveError, type ChainWriter, type ReceiptLog } from '../writer.ts';
import { REGISTRY_ADDRESS } from './abi.ts';
import { MAX_CELLS_PER_OP, PERMANENT_EXPIRES_AT, createCells, type Cell } from './attributes.ts';
import { encodeExecute, type RegistryOperation } from './calldata.ts';
import { DbChainCodecError, decodeRegistryError, decodeRevertReason, describeRegistryError } from './errors.ts';
import { decodeRegistryEvent } from './events.ts';
import { predictKeys, randomSalt } from './keys.ts';
import { getEntity, getEntityNonce, type EntityData } from './reads.ts';
import { overBounds } from './txBounds.ts';
import { checkSchemaContent, contentCells } from './schema.ts';

/** The node's RPC, chain, signer key and optionally its shared transport. */
export type DbChainWriterOptions = WriterOptions;

/** The revert data's custom error as one line, for tx_failed. */
export const explainRegistryRevert = (data: Hex): string | undefined => {
  const revert = decodeRegistryError(data);
  return revert ? describeRegistryError(revert) : decodeRevertReason(data);
};

/** Sorted by raw name, then cut into patches of at most MAX_CELLS_PER_OP cells (a patch applies in order). */
function patches(entityKey: Hex, cells: Cell[]): RegistryOperation[] {
  const sorted = [...cells].sort(byName);
  const out: RegistryOperation[] = [];
  for (let i = 0; i < sorted.length; i += MAX_CELLS_PER_OP)
    out.push({ op: 'patch', entityKey, mutations: sorted.slice(i, i + MAX_CELLS_PER_OP) });
  return out;
}

/** `$`-names sort before letters and lowercase names compare like their bytes: a plain sort is the node's. */
const byName = (a: Cell, b: Cell) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * @example const writer = createDbChainWriter({ rpcUrl, chainId: 7738577, privateKey, transport })
 */
export function createDbChainWriter(options: DbChainWriterOptions): ChainWriter {
  const { transport, sender } = createWriterSender(options, REGISTRY_ADDRESS, explainRegistryRevert);
  const owner = sender.address as Address;
  /**
   * The entity nonce after the last accepted send: a send before that one is mined must not reuse its
   * nonces. Forgotten when a write reverts (the node did not advance it).
   */
  let nextNonce: bigint | undefined;

  async function encode(batch: EntityBatch): Promise<{ data: Hex; keys: Hex[]; nonceAfter: bigint | undefined }> {
    for (const content of [...batch.creates, ...batch.updates]) checkSchemaContent(content);
    const chainNonce = batch.creates.length ? await getEntityNonce(transport, owner) : 0n;
    const nonce = nextNonce !== undefined && nextNonce > chainNonce ? nextNonce : chainNonce;
    const salts = batch.creates.map(() => randomSalt());
    const current = new Map<Hex, EntityData | undefined>();
    const needed = [...new Set([...batch.updates.map((u) => u.entityKey), ...batch.extends.map((e) => e.entityKey)])];
    for (const key of needed) current.set(key, await getEntity(transport, key));
    const head = batch.updates.length ? BigInt(await getBlockNumber(transport)) : 0n;
    // An entity must outlive the block the batch lands in (head + 1 at the soonest) to be updated.
    const gone = batch.updates
      .map((u) => u.entityKey)
      .filter((key) => {
        const entity = current.get(key);
        return entity === undefined || (entity.expiresAt !== undefined && BigInt(entity.expiresAt) <= head + 1n);
      });
    if (gone.length) throw new EntityNotLiveError(gone);
    const ops: RegistryOperation[] = [
      ...batch.creates.map(
        (c, i): RegistryOperation => ({
          op: 'create',
          salt: salts[i] ?? 0n,
          ...lifetime(c.btl),
          creationFlags: 0,
          attributes: createCells({ payload: c.payload, contentType: c.contentType, attributes: contentCells(c) }).sort(
            byName,
          ),
        }),
      ),
      ...batch.updates.flatMap((u) => update(u, current.get(u.entityKey), head)),
      ...batch.deletes.map((entityKey): RegistryOperation => ({ op: 'delete', entityKey })),
      ...batch.extends.map((e): RegistryOperation => {
        const expiresAt = current.get(e.entityKey)?.expiresAt;
        // Not live: the node refuses it with EntityNotFound or EntityExpired, which tx_failed then names.
        return expiresAt === undefined
          ? { op: 'extend', entityKey: e.entityKey, expiresAt: 0n, minLifetime: e.numberOfBlocks }
          : { op: 'extend', entityKey: e.entityKey, expiresAt: BigInt(expiresAt) + e.numberOfBlocks, minLifetime: 0n };
      }),
      ...batch.ownerChanges.map(
        (o): RegistryOperation => ({ op: 'transfer', entityKey: o.entityKey, newOwner: o.newOwner }),
      ),
    ];
    let data: Hex;
    try {
      data = encodeExecute(ops);
    } catch (error) {
      if (error instanceof DbChainCodecError)
        throw new InvalidArgumentError(`the DB-chain refuses this write: ${error.message}`);
      throw error;
    }
    const over = overBounds(data);
    if (over) throw new InvalidArgumentError(`followers skip this write (${over}): write fewer entities per call`);
    const keys = predictKeys(options.chainId, owner, nonce, salts);
    return { data, keys, nonceAfter: batch.creates.length ? nonce + BigInt(salts.length) : nextNonce };
  }

  return {
    address: sender.address,
    balance: () => sender.balance(),
    async send(batch) {
      const { hash, extra } = await sender.send(async () => {
        const { data, keys, nonceAfter } = await encode(typeof batch === 'function' ? batch() : batch);
        return { data, extra: { keys, nonceAfter } };
      });
      nextNonce = extra.nonceAfter;
      return { hash, keys: extra.keys };
    },
    async waitForReceipt(hash, timeoutMs) {
      const { logs, ...outcome } = await sender.waitForReceipt(hash, timeoutMs);
      if (outcome.status === 'reverted') nextNonce = undefined;
      // The keys sent were predicted from the entity nonce at send time; the EntityCreated logs say which
      // keys the node minted (arkiv-gen-d.md §7: "take keys from EntityCreated logs, in order").
      return logs ? { ...outcome, keys: createdKeys(logs) } : outcome;
    },
  };
}

/** The keys the registry's EntityCreated logs name, in log order (a log it cannot read is not ours). */
function createdKeys(logs: readonly ReceiptLog[]): Hex[] {
  const keys: Hex[] = [];
  for (const log of logs) {
    try {
      const event = decodeRegistryEvent(log);
      if (event?.event === 'created') keys.push(event.entityKey);
    } catch {
      // A malformed registry log from a hostile node names no key.
    }
  }
  return keys;
}

/** The patch (and extend) replacing an entity's whole content; `current` is the entity at the tip. */
function update(u: UpdateOp, current: EntityData | undefined, head: bigint): RegistryOperation[] {
  const cells = createCells({ payload: u.payload, contentType: u.contentType, attributes: contentCells(u) });
  const kept = new Set(cells.map((c) => c.name));
  const gone = (current?.attributes ?? [])
    .map((a) => a.name)
    .filter((name) => !kept.has(name))
    .map((name): Cell => ({ name, type: 'tombstone' }));
  const ops = patches(u.entityKey, [...cells, ...gone]);
  // v1 sets the expiry to block + btl; the DB-chain only lengthens, so a longer remaining life stays.
  const expiresAt = current?.expiresAt === undefined ? undefined : BigInt(current.expiresAt);
  if (expiresAt === PERMANENT_EXPIRES_AT) return ops;
  if (expiresAt === undefined || u.btl === PERMANENT_BTL || expiresAt <= head + 1n + u.btl)
    ops.push({ op: 'extend', entityKey: u.entityKey, ...lifetime(u.btl) });
  return ops;
}

/** The `(expiresAt, minLifetime)` of a btl: relative, or permanent for PERMANENT_BTL. */
const lifetime = (btl: bigint): { expiresAt: bigint; minLifetime: bigint } =>
  btl === PERMANENT_BTL ? { expiresAt: PERMANENT_EXPIRES_AT, minLifetime: 0n } : { expiresAt: 0n, minLifetime: btl };
