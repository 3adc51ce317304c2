// What the tracked-entity table keeps per entity once its content is dropped, for entities as they arrive
// from the chain (each with strings of its own, each expiring at a block of its own), and its expiry index
// against a plain Map of Sets after any history of sets, deletes, aborted blocks and rollbacks.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { Hex } from 'viem';
import { boundedEntity, TrackedEntities, type TrackedEntity } from '../../indexer/trackedEntities.ts';
import { heapNodes } from '../helpers/heapSnapshot.ts';

const liveBytes = async () => (await heapNodes()).reduce((sum, n) => sum + n.selfSize, 0);
const OWNER = '0x00000000000000000000000000000000000000aa';

/** A vector entity as a chain read builds it: its strings decoded afresh. */
function arrival(key: Hex, i: number) {
  const fresh = (s: string) => [...s].join('');
  return boundedEntity({
    key,
    kind: fresh('vector') as 'vector',
    collection: fresh('soak'),
    owner: fresh(OWNER) as Hex,
    creator: fresh(OWNER) as Hex,
    expiresAt: BigInt(100_000 + i),
    lastModifiedAtBlock: 1000 + i,
    sequence: BigInt(1000 + i) << 32n,
    contentType: fresh('application/vnd.arkivector.vector.v1'),
    payload: new Uint8Array(80),
    stringAttributes: new Map([
      [fresh('arkivector_type'), fresh('vector')],
      [fresh('arkivector_collection'), fresh('soak')],
      [fresh('arkivector_id'), `e${i}`],
    ]),
    numericAttributes: new Map(),
  });
}

test('tracked entities: a resolved vector entity costs at most 400 bytes besides its key', async () => {
  const n = 4000;
  const keys = Array.from({ length: n }, (_, i) => `0x${i.toString(16).padStart(64, '0')}` as Hex);
  const before = await liveBytes();
  const table = new TrackedEntities(() => {});
  for (let i = 0; i < n; i++) {
    table.beginBlock(1000 + i);
    const entity = arrival(keys[i]!, i);
    table.set(entity.key, entity);
    table.endBlock();
    table.dropResolvedContent();
  }
  const perEntity = ((await liveBytes()) - before) / n;
  assert.equal(table.size, n);
  assert.ok(perEntity <= 400, `${perEntity.toFixed(0)} bytes per entity`);
});

test('property: expiringAt answers as a Map of expiry to keys built from the live entities', () => {
  const keys = ['0x01', '0x02', '0x03', '0x04', '0x05'] as Hex[];
  const op = fc.record({
    key: fc.constantFrom(...keys),
    expiry: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
  });
  const entity = (key: Hex, expiry: number, version: number): TrackedEntity => ({
    ...arrival(key, version),
    expiresAt: BigInt(expiry),
  });
  fc.assert(
    fc.property(
      fc.array(fc.array(op, { maxLength: 5 }), { minLength: 1, maxLength: 8 }),
      fc.array(op, { maxLength: 5 }),
      fc.nat(),
      (blocks, partial, cut) => {
        const table = new TrackedEntities(() => {});
        const check = () => {
          const model = new Map<number, Set<Hex>>();
          for (const e of table.values()) {
            const b = Number(e.expiresAt);
            if (!model.has(b)) model.set(b, new Set());
            model.get(b)!.add(e.key);
          }
          for (let b = 0; b <= 5; b++)
            assert.deepEqual(new Set(table.expiringAt(b)), model.get(b) ?? new Set(), `expiring at ${b}`);
        };
        let version = 0;
        blocks.forEach((ops, i) => {
          table.beginBlock(i + 1);
          for (const { key, expiry } of ops)
            table.set(key, expiry === undefined ? undefined : entity(key, expiry, ++version));
          table.endBlock();
          check();
        });
        table.beginBlock(blocks.length + 1);
        for (const { key, expiry } of partial)
          table.set(key, expiry === undefined ? undefined : entity(key, expiry, ++version));
        table.abortBlock();
        check();
        table.rollBackTo(cut % (blocks.length + 1));
        check();
      },
    ),
    { numRuns: 300 },
  );
});

test('tracked entities: the journal keeps at most 24 bytes a change', async () => {
  const blocks = 250;
  const perBlock = 200;
  const table = new TrackedEntities(() => {});
  for (let b = 0; b < blocks; b++) {
    table.beginBlock(1000 + b);
    for (let j = 0; j < perBlock; j++) {
      const i = b * perBlock + j;
      const entity = arrival(`0x${i.toString(16).padStart(64, '0')}` as Hex, i);
      table.set(entity.key, entity);
    }
    table.endBlock();
    table.dropResolvedContent();
  }
  // Measured twice: the first snapshot of a process settles what V8 frees lazily (code, caches).
  await liveBytes();
  const journaled = await liveBytes();
  table.resetJournal(1000 + blocks);
  const perChange = (journaled - (await liveBytes())) / (blocks * perBlock);
  assert.equal(table.size, blocks * perBlock);
  assert.ok(perChange <= 24, `${perChange.toFixed(1)} bytes per change`);
});
