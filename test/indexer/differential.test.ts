// Differential test of the chain indexer: several writers (one outside a closed collection, one hostile)
// send thousands of random operations through the unmodified SDK and raw signed transactions; after every
// block the indexer's collections must equal what the devnet's arkiv_query says at that block under the
// collection rules. Forced reorgs are mixed in. On both generations (issue 20, item 5): on the DB-chain the
// writes are viem-encoded calldata (test/helpers/dbchainRawWriter.ts), updates are patches that sometimes
// leave old attributes in place, and the oracle reads the DB-chain devnet's own arkiv_query.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bytesToHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { encodeCollectionEntity, encodeVectorEntity, type CollectionDefinition } from '../../src/collections/index.ts';
import { ARKIV_ADDRESS, emptyStorageOps, encodeStorageTransaction, type StorageOps } from '../../src/chain/v1/index.ts';
import { createDbChainSource, createHttpTransport, type CreateOp, type RpcTransport } from '../../src/chain/index.ts';
import type { Devnet, DevnetProtocolName } from '../../src/devnet/index.ts';
import { ChainIndexer } from '../../indexer/index.ts';
import { publicClient, rpcResult, startTestDevnet, walletClient } from '../helpers/devnet.ts';
import { expectedCollections, indexedCollections } from '../helpers/indexerOracle.ts';
import { mulberry32 } from '../helpers/generators.ts';
import { engineStores } from '../../src/engine/storeFactory.ts';
import { defined } from '../helpers/defined.ts';
import { cell, execute, nextSalt, op, sendExecute, type Op } from '../helpers/dbchainRawWriter.ts';
import { dbchainCells, PROTOCOLS, type SdkCreate } from '../helpers/generations.ts';

function rng(seed: number) {
  const next = mulberry32(seed);
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(items: readonly T[]): T => defined(items[Math.floor(next() * items.length)], 'a picked item'),
    chance: (p: number) => next() < p,
  };
}

const SEED = Number(process.env.ARKIVECTOR_TEST_SEED ?? 20261130);
const c1: CollectionDefinition = {
  dim: 4,
  metric: 'cosine',
  open: false,
  writers: [],
  index: { m: 16, ef_construction: 64, ef_search: 40 },
  attributes: { topic: 'str', stars: 'i32', score: 'f32', flag: 'bool', n: 'uint' },
};
const c2: CollectionDefinition = {
  dim: 3,
  metric: 'l2',
  open: true,
  writers: [],
  index: { m: 16, ef_construction: 64, ef_search: 40 },
  attributes: { topic: 'str' },
};
const text = (s: string) => new TextEncoder().encode(s);

/** Operations per generation: the DB-chain run is shorter (400, not 2,000) to keep `npm test` short. */
const OPS: Record<DevnetProtocolName, number> = { v1: 2_000, dbchain: 400 };
/** Names the random contents draw their attributes from: a DB-chain update tombstones the absent ones. */
const ATTRIBUTE_NAMES = ['topic', 'stars', 'score', 'flag', 'n'];

type Live = { key: Hex; owner: string; expiresAt: bigint };

/** The writes of one generation, each through a writer that is not ours. */
interface DiffWriter {
  define(who: number, name: string, def: CollectionDefinition | Uint8Array): Promise<Hex>;
  redefine(who: number, key: Hex, name: string, def: CollectionDefinition): Promise<void>;
  live(): Promise<Live[]>;
  /** One raw transaction from `who` in the block being built (automine is off): creates and deletes. */
  sendRaw(who: number, creates: SdkCreate[], deletes: Hex[]): Promise<void>;
  /** A stranger's create into c1, then handed to `to`. */
  inject(who: number, create: SdkCreate, to: Hex): Promise<void>;
  mutate(
    who: number,
    ops: {
      creates: SdkCreate[];
      updates: (SdkCreate & { entityKey: Hex })[];
      deletes: { entityKey: Hex }[];
      extensions: { entity: Live; blocks: number }[];
      ownershipChanges: { entityKey: Hex; newOwner: Hex }[];
    },
  ): Promise<void>;
}

const definitionOf = (name: string, def: CollectionDefinition | Uint8Array): SdkCreate =>
  def instanceof Uint8Array
    ? { ...encodeCollectionEntity(name, c2), payload: def, expiresIn: 100_000 }
    : { ...encodeCollectionEntity(name, def), expiresIn: 100_000 };

function v1Writer(devnet: Devnet): DiffWriter {
  const wallet = (who: number) => walletClient(devnet, who);
  return {
    define: async (who, name, def) => (await wallet(who).createEntity(definitionOf(name, def))).entityKey,
    async redefine(who, key, name, def) {
      await wallet(who).updateEntity({ entityKey: key, ...definitionOf(name, def) });
    },
    async live() {
      const rows = await rpcResult<{ data: { key: Hex; owner: string; expiresAt: number }[] }>(devnet, 'arkiv_query', [
        'arkivector_type = "vector"',
        { includeData: { key: true, owner: true, expiration: true } },
      ]);
      return rows.data.map((row) => ({ key: row.key, owner: row.owner, expiresAt: BigInt(row.expiresAt ?? 0) }));
    },
    async sendRaw(who, created, deletes) {
      // signed directly with viem (not through the SDK)
      const account = privateKeyToAccount(defined(devnet.accounts[who], 'devnet.accounts[who]').privateKey);
      const creates: CreateOp[] = created.map((c) => ({
        btl: BigInt(c.expiresIn / 2),
        contentType: c.contentType,
        payload: c.payload,
        stringAttributes: c.attributes
          .filter((a) => typeof a.value === 'string')
          .map((a) => ({ key: a.key, value: a.value as string })),
        numericAttributes: c.attributes
          .filter((a) => typeof a.value === 'number')
          .map((a) => ({ key: a.key, value: BigInt(a.value) })),
      }));
      const body: StorageOps = { ...emptyStorageOps(), creates, deletes };
      const nonce = await rpcResult<Hex>(devnet, 'eth_getTransactionCount', [account.address, 'pending']);
      const raw = await account.signTransaction({
        type: 'eip1559',
        chainId: devnet.chainId,
        nonce: Number(BigInt(nonce)),
        to: ARKIV_ADDRESS,
        data: bytesToHex(encodeStorageTransaction(body)),
        gas: 3_000_000n,
        maxFeePerGas: 3_000_000_000n,
        maxPriorityFeePerGas: 1_000_000_000n,
      });
      await rpcResult(devnet, 'eth_sendRawTransaction', [raw]);
    },
    async inject(who, create, to) {
      const injected = (await wallet(who).createEntity(create)).entityKey;
      await wallet(who).changeOwnership({ entityKey: injected, newOwner: to });
    },
    async mutate(who, { creates, updates, deletes, extensions, ownershipChanges }) {
      await wallet(who).mutateEntities({
        creates,
        updates,
        deletes,
        extensions: extensions.map(({ entity, blocks }) => ({ entityKey: entity.key, expiresIn: 2 * blocks })),
        ownershipChanges,
      });
    },
  };
}

function dbchainWriter(devnet: Devnet): DiffWriter {
  const createOp = (c: SdkCreate) =>
    op.create(nextSalt(), c.contentType, c.payload, dbchainCells(c, c1), BigInt(Math.ceil(c.expiresIn / 2)));
  // A patch setting the new content; names the content lacks are tombstoned, except `n`, which a stale
  // update leaves behind (the patch semantics the indexer must follow, not a full replace).
  const patchOp = (key: Hex, c: SdkCreate): Op => {
    const present = new Set(c.attributes.map((a) => a.key));
    const stale = ATTRIBUTE_NAMES.filter((n) => n !== 'n' && !present.has(n)).map((n) => cell.tombstone(n));
    return op.patch(key, [cell.contentType(c.contentType), cell.payload(c.payload), ...dbchainCells(c, c1), ...stale]);
  };
  return {
    define: async (who, name, def) =>
      defined((await execute(devnet, who, [createOp(definitionOf(name, def))]))[0], 'the definition key'),
    async redefine(who, key, name, def) {
      await execute(devnet, who, [patchOp(key, definitionOf(name, def))]);
    },
    async live() {
      const out: Live[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 1_000; page++) {
        const rows = await rpcResult<{ data: { key: Hex; owner: string; expiresAt: Hex }[]; cursor?: string }>(
          devnet,
          'arkiv_query',
          [
            "arkivector_type = str('vector')",
            { select: { key: true, owner: true, expiresAt: true }, limit: 200, ...(cursor ? { cursor } : {}) },
          ],
        );
        for (const row of rows.data)
          out.push({ key: row.key, owner: row.owner.toLowerCase(), expiresAt: BigInt(row.expiresAt) });
        if (!rows.cursor) return out;
        cursor = rows.cursor;
      }
      throw new Error('too many pages of live vectors');
    },
    async sendRaw(who, creates, deletes) {
      await sendExecute(devnet, who, [...creates.map(createOp), ...deletes.map((key) => op.delete(key))]);
    },
    async inject(who, create, to) {
      const [injected] = await execute(devnet, who, [createOp(create)]);
      await execute(devnet, who, [op.transfer(defined(injected, 'the injected key'), to)]);
    },
    async mutate(who, { creates, updates, deletes, extensions, ownershipChanges }) {
      await execute(devnet, who, [
        ...creates.map(createOp),
        ...updates.map((u) => patchOp(u.entityKey, u)),
        ...deletes.map((d) => op.delete(d.entityKey)),
        // an absolute target past the current expiry (a shorter one reverts ExpiryNotExtended)
        ...extensions.map(({ entity, blocks }) => op.extend(entity.key, entity.expiresAt + BigInt(blocks), 0n)),
        ...ownershipChanges.map((o) => op.transfer(o.entityKey, o.newOwner)),
      ]);
    },
  };
}

for (const protocol of PROTOCOLS)
  describe(`indexer: differential against the devnet (${protocol})`, () => {
    let devnet: Devnet;
    let transport: RpcTransport;
    let indexer: ChainIndexer;

    before(async () => {
      devnet = await startTestDevnet({ protocol });
      transport = createHttpTransport({ url: devnet.url, attempts: 2, backoffMs: 20 });
    });
    after(async () => {
      await indexer?.stop();
      await transport.close();
      await devnet.stop();
    });

    test(`≥ ${OPS[protocol].toLocaleString('en-US')} random operations from 4 writers, with hostile entities and reorgs: equal after every block`, async () => {
      const r = rng(SEED);
      const reader = publicClient(devnet);
      const address = (i: number) => defined(devnet.accounts[i], 'devnet.accounts[i]').address.toLowerCase() as Hex;
      const writer = protocol === 'dbchain' ? dbchainWriter(devnet) : v1Writer(devnet);
      // c1: closed, alice + bob; c2: open, owned by bob; carol's later "c1" is a conflict; "c3" starts invalid.
      const c1Key = await writer.define(0, 'c1', { ...c1, writers: [address(1)] });
      await writer.define(1, 'c2', c2);
      await writer.define(2, 'c1', { ...c1, dim: 8, open: true });
      await writer.define(2, 'c3', text('{not json'));

      indexer = new ChainIndexer({
        ...(protocol === 'dbchain' ? { source: createDbChainSource(transport) } : { transport }),
        stores: engineStores,
        chainId: devnet.chainId,
        blockTimeSeconds: 0.2,
        liveLag: 5,
      });
      indexer.start();

      const ids = Array.from({ length: 30 }, (_, i) => `id-${i}`);
      const words = ['cats', 'dogs', 'birds', 'fish', '猫', 'ネコ', 'émoji 🎉', ''];
      let ops = 0;
      let failedTxs = 0;
      let reorgs = 0;
      let blocksChecked = 0;

      const randomVector = (dim: number) =>
        Array.from({ length: dim }, () => Math.round((r.next() * 2 - 1) * 1000) / 1000);
      const randomCreate = (): {
        payload: Uint8Array;
        contentType: string;
        attributes: { key: string; value: string | number }[];
        expiresIn: number;
      } => {
        const collection = r.pick(['c1', 'c1', 'c2', 'c2', 'c3', 'nope']);
        const def = collection === 'c2' ? c2 : c1;
        const ttl = r.chance(0.3) ? 2 * (1 + r.int(6)) : 2 * (200 + r.int(400));
        if (r.chance(0.06)) {
          // garbage payload with the vector content type: must be rejected, never crash
          return {
            payload: Uint8Array.from({ length: r.int(20) }, () => r.int(256)),
            contentType: 'application/vnd.arkivector.vector.v1',
            attributes: [
              { key: 'arkivector_type', value: 'vector' },
              { key: 'arkivector_collection', value: collection },
              { key: 'arkivector_id', value: r.pick(ids) },
            ],
            expiresIn: ttl,
          };
        }
        const dim = r.chance(0.06) ? def.dim + 1 : def.dim;
        const attributes: Record<string, unknown> = { topic: r.pick(words) };
        if (def === c1) {
          if (r.chance(0.7)) attributes.stars = r.int(11) - 5;
          if (r.chance(0.5)) attributes.score = r.next() * 10 - 5;
          if (r.chance(0.5)) attributes.flag = r.chance(0.5);
          if (r.chance(0.3)) attributes.n = r.int(1_000_000);
        }
        const encoded = encodeVectorEntity(
          { collection, id: r.pick(ids), vector: randomVector(def.dim), document: r.pick(words), attributes },
          def,
        );
        let payload = encoded.payload;
        if (dim !== def.dim)
          payload = encodeVectorEntity(
            { collection, id: 'x', vector: randomVector(dim), document: '' },
            { ...def, dim },
          ).payload;
        const extra: { key: string; value: string | number }[] = r.chance(0.04)
          ? [{ key: 'stars', value: 'not a number' }]
          : r.chance(0.04)
            ? // an id of the entity-key form: refused by the codec, so skipped and counted
              [
                {
                  key: 'arkivector_id',
                  value: `0x${Array.from({ length: 64 }, () => r.int(16).toString(16)).join('')}`,
                },
              ]
            : [];
        return {
          payload,
          contentType: encoded.contentType,
          attributes: [...encoded.attributes.filter((a) => !extra.some((e) => e.key === a.key)), ...extra],
          expiresIn: ttl,
        };
      };

      const check = async (label: string) => {
        const head = Number(await reader.getBlockNumber({ cacheTime: 0 }));
        indexer.poke();
        assert.ok(
          await indexer.waitForBlock(head, 20_000),
          `${label}: indexer did not reach block ${head} (at ${indexer.asOfBlock}, ${indexer.lastError ?? 'no error'})`,
        );
        const at = indexer.asOfBlock!;
        assert.deepEqual(
          indexedCollections(indexer),
          await expectedCollections(devnet, at),
          `${label}: state differs at block ${at}`,
        );
        blocksChecked++;
      };

      await check('after bootstrap');
      // The run is bounded by count (a step that is not refused adds at least one operation, so 4,000 steps
      // reach 2,000 operations); the time bound is only a safety net against a hang, far above a run on a loaded machine
      // (~100 s alone, ~5 min beside the rest of the suite on 2 cores), so load alone never fails the test.
      const deadline = Date.now() + 20 * 60_000;
      for (let step = 0; ops < OPS[protocol] && Date.now() < deadline && step < 2 * OPS[protocol]; step++) {
        const who = r.int(4);
        const live = await writer.live();
        const mine = live.filter((l) => l.owner === address(who));
        const roll = r.next();
        try {
          if (roll < 0.06 && step > 5) {
            // several transactions in one block, signed directly with viem (not through the SDK)
            await rpcResult(devnet, 'devnet_setAutomine', [false]);
            try {
              const senders = [...new Set([r.int(4), r.int(4)])];
              for (const sender of senders) {
                const creates = Array.from({ length: 1 + r.int(3) }, randomCreate);
                const ownedBySender = live.filter((l) => l.owner === address(sender));
                const deletes = ownedBySender.length && r.chance(0.5) ? [r.pick(ownedBySender).key] : [];
                await writer.sendRaw(sender, creates, deletes);
                ops += creates.length + deletes.length;
              }
              await rpcResult(devnet, 'devnet_mine', []);
            } finally {
              await rpcResult(devnet, 'devnet_setAutomine', [true]);
            }
          } else if (roll < 0.09) {
            devnet.mine(1 + r.int(3));
          } else if (roll < 0.11 && step > 10) {
            devnet.reorg(1 + r.int(2), { replay: r.chance(0.5) });
            reorgs++;
          } else if (roll < 0.13) {
            // the owner of c1 edits its writers (carol in or out) or opens it
            const writers = r.chance(0.5) ? [address(1), address(2)] : [address(1)];
            await writer.redefine(0, c1Key, 'c1', { ...c1, writers, open: r.chance(0.2) }).catch(() => failedTxs++);
            ops++;
          } else if (roll < 0.15 && step > 20) {
            await writer.define(2, 'c3', c2);
            ops++;
          } else if (roll < 0.21) {
            // The injection of issue 8: dave (never a writer of c1) creates an entity with a live id of the closed
            // c1, then hands it to a permitted writer; its newer last-modified block must not let it count or shadow.
            const c = randomCreate();
            const attributes = c.attributes.map((a) => (a.key === 'arkivector_collection' ? { ...a, value: 'c1' } : a));
            await writer.inject(3, { ...c, attributes }, address(r.int(2)));
            ops += 2;
          } else {
            const creates = Array.from({ length: r.int(4) }, randomCreate);
            const updates = mine.length && r.chance(0.5) ? [{ entityKey: r.pick(mine).key, ...randomCreate() }] : [];
            const remaining = mine.filter((m) => !updates.some((u) => u.entityKey === m.key));
            const deletes = remaining.length && r.chance(0.3) ? [{ entityKey: r.pick(remaining).key }] : [];
            // v1 lets anyone extend; the DB-chain only the owner (no entity of ours is permissionless)
            const extendable = protocol === 'dbchain' ? mine : live;
            const extensions =
              extendable.length && r.chance(0.3) ? [{ entity: r.pick(extendable), blocks: 1 + r.int(20) }] : [];
            const movable = remaining.filter((m) => !deletes.some((d) => d.entityKey === m.key));
            const ownershipChanges =
              movable.length && r.chance(0.15)
                ? [
                    {
                      entityKey: r.pick(movable).key,
                      // the DB-chain refuses a transfer to oneself (TransferToSelf)
                      newOwner: address(protocol === 'dbchain' ? (who + 1 + r.int(3)) % 4 : r.int(4)),
                    },
                  ]
                : [];
            const count =
              creates.length + updates.length + deletes.length + extensions.length + ownershipChanges.length;
            if (creates.length + updates.length + deletes.length + extensions.length === 0)
              creates.push(randomCreate());
            ops += Math.max(count, 1);
            await writer.mutate(who, { creates, updates, deletes, extensions, ownershipChanges });
          }
        } catch (error) {
          // a randomly chosen operation may be refused (e.g. an extension of an entity that expired meanwhile)
          if (!/Transaction failed|reverted/.test((error as Error).message)) throw error;
          failedTxs++;
        }
        await check(`step ${step}`);
      }
      assert.ok(ops >= OPS[protocol], `only ${ops} operations before the 20-minute safety bound`);
      assert.ok(reorgs > 0 && blocksChecked > 100, `reorgs ${reorgs}, blocks checked ${blocksChecked}`);
      const final = indexedCollections(indexer);
      assert.ok(final.c1 && final.c2, 'c1 and c2 are indexed');
      assert.ok(Object.keys(final.c1.records).length > 0 && Object.keys(final.c2.records).length > 0);
      assert.ok(final.c1.rejected + final.c2.rejected > 0, 'hostile entities were rejected');
      assert.ok(final.c1.shadowed + final.c2.shadowed > 0, 'duplicate ids were shadowed');
      assert.equal(indexer.collections.get('c1')!.conflicts.length, 1);
      // No entity of c1 was created by dave, whatever it was handed to.
      const dave = address(3);
      for (const record of indexer.collections.get('c1')!.store.records())
        assert.notEqual(record.creator?.toLowerCase(), dave, `c1 holds ${record.id} created by the stranger`);
      process.stderr.write(
        `# differential (${protocol}): seed ${SEED}, ${ops} ops, ${failedTxs} failed txs, ${reorgs} reorgs, ${blocksChecked} checks, ${indexer.counters.blocksApplied} blocks applied\n`,
      );
    });
  });
