// Hostile entities as a fuzz test (issue 8, item 13): fast-check generates entities a raw writer sends
// through the devnet into an open and a closed collection: malformed payloads, wrong dims, NaN/Inf halves,
// bad attributes, key-form ids, oversize documents, spoofed collection names, transfers in and out of the
// closed collection, updates and deletes. Afterwards a tailing indexer and a freshly bootstrapped one must
// both equal the independent oracle. Short mode in `npm test`; ARKIVECTOR_FUZZ=long sends ≥ 10,000.
// On both generations (issue 20, item 5): on the DB-chain the entities are encoded with viem alone
// (test/helpers/dbchainRawWriter.ts) and are hostile only in ways the chain itself accepts (no str value
// over 128 bytes, no payload over 128 KiB, so no entity over the decoded-size limit), plus what only the
// DB-chain can carry: cells of foreign types, patches that tombstone or re-type our attributes.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { Hex } from 'viem';
import {
  COLLECTION_CONTENT_TYPE,
  ENTITY_DECODED_MAX_BYTES,
  VECTOR_CONTENT_TYPE,
  encodeCollectionDefinition,
  type CollectionDefinition,
} from '../../src/collections/index.ts';
import { ARKIV_TOPICS } from '../../src/chain/v1/index.ts';
import type { CreateOp } from '../../src/chain/index.ts';
import type { Devnet, DevnetProtocolName } from '../../src/devnet/index.ts';
import { rpcResult } from '../helpers/devnet.ts';
import { cell, execute, nextSalt, op, type Cell } from '../helpers/dbchainRawWriter.ts';
import { expectedCollections, indexedCollections } from '../helpers/indexerOracle.ts';
import { attributes, sendStorageTx } from '../helpers/rawWriter.ts';
import { defined } from '../helpers/defined.ts';
import { indexerHarness } from '../helpers/indexerHarness.ts';
import { PROTOCOLS } from '../helpers/generations.ts';

const LONG = process.env.ARKIVECTOR_FUZZ === 'long';
/** Entities per generation (the DB-chain run costs a fifth of the v1 one: no brotli). */
const ENTITIES: Record<DevnetProtocolName, number> = LONG ? { v1: 10_000, dbchain: 10_000 } : { v1: 400, dbchain: 400 };
const PER_TX = 100;
const SEED = Number(process.env.ARKIVECTOR_TEST_SEED ?? 20261130);

const OWNER = 0;
const WRITER = 1;
const STRANGER = 2;
const closed: CollectionDefinition = {
  dim: 4,
  metric: 'cosine',
  open: false,
  writers: [],
  index: { m: 16, ef_construction: 64, ef_search: 40 },
  attributes: { topic: 'str', stars: 'i32', flag: 'bool' },
};
const open: CollectionDefinition = { ...closed, dim: 3, open: true, attributes: { topic: 'str' } };

interface Hostile {
  sender: number;
  collection: string;
  id: string;
  payload: { kind: 'valid' | 'dim' | 'nan' | 'inf' | 'garbage' | 'truncated' | 'oversize'; doc: string };
  attrs: 'good' | 'wrong-kind' | 'out-of-range' | 'missing-type' | 'bad-type' | 'foreign-type';
  transfer: 'none' | 'to-owner' | 'to-writer' | 'to-stranger';
  later: 'none' | 'update' | 'delete' | 'strip' | 'retype';
}

/** The hostile entities of `protocol`: on the DB-chain, only those the chain accepts, and its own kinds. */
function hostileOf(protocol: DevnetProtocolName): fc.Arbitrary<Hostile> {
  const db = protocol === 'dbchain';
  return fc.record({
    sender: fc.constantFrom(OWNER, WRITER, STRANGER, STRANGER),
    collection: fc.constantFrom('closed', 'closed', 'open', 'open', 'nowhere', 'Closed', 'closed '),
    id: fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', '猫', 'émoji 🎉') },
      { weight: 1, arbitrary: fc.stringMatching(/^0x[0-9a-f]{64}$/) },
      // the DB-chain refuses str values over 128 bytes: its longest id is the longest it carries
      { weight: 1, arbitrary: fc.constantFrom('', 'tab\there', 'x'.repeat(db ? 128 : 300)) },
      { weight: 1, arbitrary: fc.string({ maxLength: 8 }) },
    ),
    payload: fc.record({
      kind: fc.constantFrom(
        'valid',
        'valid',
        'valid',
        'dim',
        'nan',
        'inf',
        'garbage',
        'truncated',
        ...(db ? [] : (['oversize'] as const)),
      ),
      doc: fc.string({ maxLength: 40 }),
    }),
    attrs: fc.constantFrom(
      'good',
      'good',
      'good',
      'wrong-kind',
      'out-of-range',
      'missing-type',
      'bad-type',
      ...(db ? (['foreign-type'] as const) : []),
    ),
    transfer: fc.constantFrom('none', 'none', 'none', 'to-owner', 'to-writer', 'to-stranger'),
    later: fc.constantFrom('none', 'none', 'none', 'update', 'delete', ...(db ? (['strip', 'retype'] as const) : [])),
  }) as fc.Arbitrary<Hostile>;
}

function payloadOf(h: Hostile, dim: number): Uint8Array {
  const doc = new TextEncoder().encode(
    h.payload.kind === 'oversize' ? 'z'.repeat(ENTITY_DECODED_MAX_BYTES) : h.payload.doc,
  );
  const d = h.payload.kind === 'dim' ? dim + 1 : dim;
  const out = new Uint8Array(4 + 2 * d + doc.length);
  out.set([1, 1, d & 0xff, d >> 8]);
  for (let i = 0; i < d; i++) {
    // 0x3c00 = 1.0; 0x7e00 = NaN; 0x7c00 = +Inf
    const bits =
      i === 0 && h.payload.kind === 'nan' ? 0x7e00 : i === 0 && h.payload.kind === 'inf' ? 0x7c00 : 0x3c00 - i;
    out[4 + 2 * i] = bits & 0xff;
    out[5 + 2 * i] = bits >> 8;
  }
  out.set(doc, 4 + 2 * d);
  if (h.payload.kind === 'garbage') return out.map((b, i) => (b * 31 + i) & 0xff).subarray(0, 7);
  if (h.payload.kind === 'truncated') return out.subarray(0, 4 + d);
  return out;
}

const dimOf = (h: Hostile) => (h.collection === 'open' ? open.dim : closed.dim);
const contentTypeOf = (h: Hostile) => (h.attrs === 'bad-type' ? 'text/plain' : VECTOR_CONTENT_TYPE);
const reserved = (h: Hostile) => [
  { key: 'arkivector_type', value: h.attrs === 'missing-type' ? 'vectors' : 'vector' },
  { key: 'arkivector_collection', value: h.collection },
  { key: 'arkivector_id', value: h.id },
];

function createOf(h: Hostile): CreateOp {
  const list: { key: string; value: string | number }[] = [
    ...reserved(h),
    { key: 'topic', value: h.attrs === 'wrong-kind' ? 7 : 'fuzz' },
  ];
  if (h.collection !== 'open') {
    list.push({ key: 'stars', value: h.attrs === 'out-of-range' ? 2 ** 40 : 2 ** 31 + 3 });
    list.push({ key: 'flag', value: h.attrs === 'out-of-range' ? 5 : 1 });
  }
  return { btl: 100_000n, contentType: contentTypeOf(h), payload: payloadOf(h, dimOf(h)), ...attributes(list) };
}

/** The same entity as DB-chain cells (ARCHITECTURE.md §8.3), each hostile kind in a form the chain accepts. */
function cellsOf(h: Hostile): Cell[] {
  const cells = reserved(h).map((a) => cell.str(a.key, a.value));
  const kind = h.attrs;
  cells.push(
    kind === 'wrong-kind'
      ? cell.i32('topic', 7)
      : kind === 'foreign-type'
        ? cell.addr('topic', `0x${'ab'.repeat(20)}`)
        : cell.str('topic', 'fuzz'),
  );
  if (h.collection !== 'open') {
    // out of range: a u64 where an i32 or a bool is declared reads back as a number outside its type
    cells.push(
      kind === 'out-of-range'
        ? cell.u64('stars', 2n ** 40n)
        : kind === 'foreign-type'
          ? cell.dec('stars', 35n * 10n ** 17n)
          : cell.i32('stars', 3),
    );
    cells.push(kind === 'out-of-range' ? cell.u64('flag', 5) : cell.bool('flag', true));
  }
  return cells;
}

/** How each generation's raw writer sends the fuzz's entities. */
interface FuzzWriter {
  define(sender: number, name: string, def: CollectionDefinition): Promise<void>;
  /** Creates `hs` in one transaction from `sender`; resolves to their keys in order. */
  create(sender: number, hs: Hostile[]): Promise<Hex[]>;
  /** Transfers, updates (with a valid, good content), and the rest, in one transaction from `sender`. */
  later(
    sender: number,
    ops: {
      transfers: { key: Hex; to: Hex }[];
      updates: { key: Hex; h: Hostile }[];
      deletes: Hex[];
      patches: { key: Hex; h: Hostile }[];
    },
  ): Promise<void>;
}

const definitionAttributes = (name: string) => [
  { key: 'arkivector_type', value: 'collection' },
  { key: 'arkivector_collection', value: name },
];

function v1Writer(devnet: Devnet): FuzzWriter {
  const ok = (answer: { result?: Hex; error?: { message: string } }) => {
    assert.ok(answer.result, answer.error?.message);
    return answer.result;
  };
  return {
    async define(sender, name, def) {
      ok(
        await sendStorageTx(devnet, sender, {
          creates: [
            {
              btl: 1_000_000n,
              contentType: COLLECTION_CONTENT_TYPE,
              payload: encodeCollectionDefinition(def),
              ...attributes(definitionAttributes(name)),
            },
          ],
        }),
      );
    },
    async create(sender, hs) {
      const hash = ok(await sendStorageTx(devnet, sender, { creates: hs.map(createOf) }));
      const receipt = await rpcResult<{ status: Hex; logs: { topics: Hex[] }[] }>(devnet, 'eth_getTransactionReceipt', [
        hash,
      ]);
      assert.equal(receipt.status, '0x1', 'a storage transaction of the fuzz writer failed');
      return receipt.logs
        .filter((l) => l.topics[0] === ARKIV_TOPICS.created)
        .map((l) => defined(l.topics[1], 'the entity key of a Created log'));
    },
    async later(sender, { transfers, updates, deletes }) {
      ok(
        await sendStorageTx(devnet, sender, {
          ownerChanges: transfers.map(({ key, to }) => ({ entityKey: key, newOwner: to })),
          updates: updates.map(({ key, h }) => ({ ...createOf(h), entityKey: key })),
          deletes,
        }),
      );
    },
  };
}

function dbchainWriter(devnet: Devnet): FuzzWriter {
  return {
    async define(sender, name, def) {
      await execute(devnet, sender, [
        op.create(
          nextSalt(),
          COLLECTION_CONTENT_TYPE,
          encodeCollectionDefinition(def),
          definitionAttributes(name).map((a) => cell.str(a.key, a.value)),
        ),
      ]);
    },
    create: (sender, hs) =>
      execute(
        devnet,
        sender,
        hs.map((h) => op.create(nextSalt(), contentTypeOf(h), payloadOf(h, dimOf(h)), cellsOf(h), 100_000n)),
      ),
    async later(sender, { transfers, updates, deletes, patches }) {
      await execute(devnet, sender, [
        ...transfers.map(({ key, to }) => op.transfer(key, to)),
        // an update sets every cell of the new content (the names are the create's, so nothing to tombstone)
        ...updates.map(({ key, h }) =>
          op.patch(key, [cell.contentType(contentTypeOf(h)), cell.payload(payloadOf(h, dimOf(h))), ...cellsOf(h)]),
        ),
        // hostile patches: drop our id, or re-type a declared attribute to one it cannot be read as
        ...patches.map(({ key, h }) =>
          op.patch(key, [
            h.later === 'strip' ? cell.tombstone('arkivector_id') : cell.str('topic', 'retyped'),
            ...(h.later === 'retype' && h.collection !== 'open' ? [cell.str('stars', 'three')] : []),
          ]),
        ),
        ...deletes.map((key) => op.delete(key)),
      ]);
    },
  };
}

for (const protocol of PROTOCOLS)
  describe(`indexer: hostile entities fuzz (${protocol})`, () => {
    const harness = indexerHarness(120_000, protocol);
    const { newIndexer, synced } = harness;

    test(`${ENTITIES[protocol]} generated hostile entities: a tailing and a bootstrapped indexer equal the oracle`, async () => {
      const address = (i: number) =>
        defined(harness.devnet.accounts[i], 'harness.devnet.accounts[i]').address.toLowerCase() as Hex;
      const writer = protocol === 'dbchain' ? dbchainWriter(harness.devnet) : v1Writer(harness.devnet);
      await writer.define(OWNER, 'closed', { ...closed, writers: [address(WRITER)] });
      await writer.define(STRANGER, 'open', open);
      // a stranger's later definition of "closed": a conflict, never the winner
      await writer.define(STRANGER, 'closed', { ...closed, open: true });
      const tailing = newIndexer();
      await synced(tailing);

      const generated = fc.sample(hostileOf(protocol), { numRuns: ENTITIES[protocol], seed: SEED });
      const stats = { txs: 0, transfers: 0, updates: 0, deletes: 0, patches: 0 };
      for (let start = 0; start < generated.length; start += PER_TX) {
        const chunk = generated.slice(start, start + PER_TX);
        const keysBySender = new Map<number, { key: Hex; h: Hostile }[]>();
        for (const sender of [OWNER, WRITER, STRANGER]) {
          const mine = chunk.filter((h) => h.sender === sender);
          if (!mine.length) continue;
          const keys = await writer.create(sender, mine);
          assert.equal(keys.length, mine.length, 'one key per create');
          keysBySender.set(
            sender,
            keys.map((key, i) => ({ key, h: defined(mine[i], `hostile entity ${i}`) })),
          );
          stats.txs++;
        }
        // Transfers, updates and deletes by each current owner, one transaction per sender.
        for (const [sender, created] of keysBySender) {
          const target = { 'to-owner': OWNER, 'to-writer': WRITER, 'to-stranger': STRANGER } as const;
          const transfers = created
            .filter(({ h }) => h.transfer !== 'none' && target[h.transfer as keyof typeof target] !== sender)
            .map(({ key, h }) => ({ key, to: address(target[h.transfer as keyof typeof target]) }));
          const moved = new Set(transfers.map((o) => o.key));
          const staying = created.filter(({ key }) => !moved.has(key));
          const updates = staying
            .filter(({ h }) => h.later === 'update')
            .map(({ key, h }) => ({
              key,
              h: { ...h, payload: { kind: 'valid', doc: 'updated' }, attrs: 'good' } as Hostile,
            }));
          const patches = staying.filter(({ h }) => h.later === 'strip' || h.later === 'retype');
          const deletes = staying.filter(({ h }) => h.later === 'delete').map(({ key }) => key);
          if (!transfers.length && !updates.length && !deletes.length && !patches.length) continue;
          await writer.later(sender, { transfers, updates, deletes, patches });
          stats.txs++;
          stats.transfers += transfers.length;
          stats.updates += updates.length;
          stats.deletes += deletes.length;
          stats.patches += patches.length;
        }
      }
      await synced(tailing);
      const fresh = newIndexer();
      await synced(fresh);
      await synced(tailing);
      const at = tailing.asOfBlock!;
      assert.equal(fresh.asOfBlock, at);
      const expected = await expectedCollections(harness.devnet, at);
      assert.ok(expected.closed && expected.open, 'both collections are expected');
      assert.deepEqual(indexedCollections(tailing), expected, 'tailing indexer differs from the oracle');
      assert.deepEqual(indexedCollections(fresh), expected, 'bootstrapped indexer differs from the oracle');
      // the fuzz must have exercised both sides of every rule
      assert.ok(expected.closed.rejected > 0 && expected.open.rejected > 0, 'rejections in both collections');
      assert.ok(Object.keys(expected.closed.records).length > 0 && Object.keys(expected.open.records).length > 0);
      assert.ok(stats.transfers > 0 && stats.updates > 0 && stats.deletes > 0, JSON.stringify(stats));
      if (protocol === 'dbchain') assert.ok(stats.patches > 0, JSON.stringify(stats));
      process.stderr.write(
        `# hostile fuzz (${protocol}): seed ${SEED}, ${generated.length} entities in ${stats.txs} txs, ${JSON.stringify(stats)}, closed ${JSON.stringify(tailing.collections.get('closed')?.stats)}, open ${JSON.stringify(tailing.collections.get('open')?.stats)}\n`,
      );
    });
  });
