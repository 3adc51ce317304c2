// Hostile entities as a fuzz test (issue 8, item 13): fast-check generates entities a raw writer sends
// through the devnet into an open and a closed collection: malformed payloads, wrong dims, NaN/Inf halves,
// bad attributes, key-form ids, oversize documents, spoofed collection names, transfers in and out of the
// closed collection, updates and deletes. Afterwards a tailing indexer and a freshly bootstrapped one must
// both equal the independent oracle. Short mode in `npm test`; ARKIVECTOR_FUZZ=long sends ≥ 10,000.
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
import type { Devnet } from '../../src/devnet/index.ts';
import { rpcResult } from '../helpers/devnet.ts';
import { expectedCollections, indexedCollections } from '../helpers/indexerOracle.ts';
import { attributes, sendStorageTx } from '../helpers/rawWriter.ts';
import { defined } from '../helpers/defined.ts';
import { indexerHarness } from '../helpers/indexerHarness.ts';

const LONG = process.env.ARKIVECTOR_FUZZ === 'long';
const ENTITIES = LONG ? 10_000 : 400;
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
  attrs: 'good' | 'wrong-kind' | 'out-of-range' | 'missing-type' | 'bad-type';
  transfer: 'none' | 'to-owner' | 'to-writer' | 'to-stranger';
  later: 'none' | 'update' | 'delete';
}

const hostile: fc.Arbitrary<Hostile> = fc.record({
  sender: fc.constantFrom(OWNER, WRITER, STRANGER, STRANGER),
  collection: fc.constantFrom('closed', 'closed', 'open', 'open', 'nowhere', 'Closed', 'closed '),
  id: fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', '猫', 'émoji 🎉') },
    { weight: 1, arbitrary: fc.stringMatching(/^0x[0-9a-f]{64}$/) },
    { weight: 1, arbitrary: fc.constantFrom('', 'tab\there', 'x'.repeat(300)) },
    { weight: 1, arbitrary: fc.string({ maxLength: 8 }) },
  ),
  payload: fc.record({
    kind: fc.constantFrom('valid', 'valid', 'valid', 'dim', 'nan', 'inf', 'garbage', 'truncated', 'oversize'),
    doc: fc.string({ maxLength: 40 }),
  }),
  attrs: fc.constantFrom('good', 'good', 'good', 'wrong-kind', 'out-of-range', 'missing-type', 'bad-type'),
  transfer: fc.constantFrom('none', 'none', 'none', 'to-owner', 'to-writer', 'to-stranger'),
  later: fc.constantFrom('none', 'none', 'none', 'update', 'delete'),
}) as fc.Arbitrary<Hostile>;

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

function createOf(h: Hostile): CreateOp {
  const dim = h.collection === 'open' ? open.dim : closed.dim;
  const list: { key: string; value: string | number }[] = [
    { key: 'arkivector_type', value: h.attrs === 'missing-type' ? 'vectors' : 'vector' },
    { key: 'arkivector_collection', value: h.collection },
    { key: 'arkivector_id', value: h.id },
    { key: 'topic', value: h.attrs === 'wrong-kind' ? 7 : 'fuzz' },
  ];
  if (h.collection !== 'open') {
    list.push({ key: 'stars', value: h.attrs === 'out-of-range' ? 2 ** 40 : 2 ** 31 + 3 });
    list.push({ key: 'flag', value: h.attrs === 'out-of-range' ? 5 : 1 });
  }
  return {
    btl: 100_000n,
    contentType: h.attrs === 'bad-type' ? 'text/plain' : VECTOR_CONTENT_TYPE,
    payload: payloadOf(h, dim),
    ...attributes(list),
  };
}

async function createdKeys(devnet: Devnet, txHash: Hex): Promise<Hex[]> {
  const receipt = await rpcResult<{ status: Hex; logs: { topics: Hex[] }[] }>(devnet, 'eth_getTransactionReceipt', [
    txHash,
  ]);
  assert.equal(receipt.status, '0x1', 'a storage transaction of the fuzz writer failed');
  return receipt.logs
    .filter((l) => l.topics[0] === ARKIV_TOPICS.created)
    .map((l) => defined(l.topics[1], 'the entity key of a Created log'));
}

describe('indexer: hostile entities fuzz', () => {
  const harness = indexerHarness(120_000);
  const { newIndexer, synced } = harness;

  test(`${ENTITIES} generated hostile entities: a tailing and a bootstrapped indexer equal the oracle`, async () => {
    const address = (i: number) =>
      defined(harness.devnet.accounts[i], 'harness.devnet.accounts[i]').address.toLowerCase() as Hex;
    const definition = (name: string, def: CollectionDefinition) => ({
      btl: 1_000_000n,
      contentType: COLLECTION_CONTENT_TYPE,
      payload: encodeCollectionDefinition(def),
      ...attributes([
        { key: 'arkivector_type', value: 'collection' },
        { key: 'arkivector_collection', value: name },
      ]),
    });
    const ok = (answer: { result?: Hex; error?: { message: string } }) => {
      assert.ok(answer.result, answer.error?.message);
      return answer.result;
    };
    ok(
      await sendStorageTx(harness.devnet, OWNER, {
        creates: [definition('closed', { ...closed, writers: [address(WRITER)] })],
      }),
    );
    ok(await sendStorageTx(harness.devnet, STRANGER, { creates: [definition('open', open)] }));
    // a stranger's later definition of "closed": a conflict, never the winner
    ok(await sendStorageTx(harness.devnet, STRANGER, { creates: [definition('closed', { ...closed, open: true })] }));
    const tailing = newIndexer();
    await synced(tailing);

    const generated = fc.sample(hostile, { numRuns: ENTITIES, seed: SEED });
    const stats = { txs: 0, transfers: 0, updates: 0, deletes: 0 };
    for (let start = 0; start < generated.length; start += PER_TX) {
      const chunk = generated.slice(start, start + PER_TX);
      const keysBySender = new Map<number, { key: Hex; h: Hostile }[]>();
      for (const sender of [OWNER, WRITER, STRANGER]) {
        const mine = chunk.filter((h) => h.sender === sender);
        if (!mine.length) continue;
        const keys = await createdKeys(
          harness.devnet,
          ok(await sendStorageTx(harness.devnet, sender, { creates: mine.map(createOf) })),
        );
        keysBySender.set(
          sender,
          keys.map((key, i) => ({ key, h: defined(mine[i], `hostile entity ${i}`) })),
        );
        stats.txs++;
      }
      // Transfers, updates and deletes by each current owner, one transaction per sender.
      for (const [sender, created] of keysBySender) {
        const target = { 'to-owner': OWNER, 'to-writer': WRITER, 'to-stranger': STRANGER } as const;
        const ownerChanges = created
          .filter(({ h }) => h.transfer !== 'none' && target[h.transfer as keyof typeof target] !== sender)
          .map(({ key, h }) => ({ entityKey: key, newOwner: address(target[h.transfer as keyof typeof target]) }));
        const moved = new Set(ownerChanges.map((o) => o.entityKey));
        const staying = created.filter(({ key }) => !moved.has(key));
        const updates = staying
          .filter(({ h }) => h.later === 'update')
          .map(({ key, h }) => ({
            ...createOf({ ...h, payload: { kind: 'valid', doc: 'updated' }, attrs: 'good' }),
            entityKey: key,
          }));
        const deletes = staying.filter(({ h }) => h.later === 'delete').map(({ key }) => key);
        if (!ownerChanges.length && !updates.length && !deletes.length) continue;
        ok(await sendStorageTx(harness.devnet, sender, { ownerChanges, updates, deletes }));
        stats.txs++;
        stats.transfers += ownerChanges.length;
        stats.updates += updates.length;
        stats.deletes += deletes.length;
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
    process.stderr.write(
      `# hostile fuzz: seed ${SEED}, ${generated.length} entities in ${stats.txs} txs, ${JSON.stringify(stats)}, closed ${JSON.stringify(tailing.collections.get('closed')?.stats)}, open ${JSON.stringify(tailing.collections.get('open')?.stats)}\n`,
    );
  });
});
