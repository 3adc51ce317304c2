// Tests src/engine/rebuild.ts, rebuildThread.ts and rebuildWorker.ts: graph rebuilds run in a worker
// thread while blocks keep being applied and read; the new graph is caught up and swapped in at a block
// boundary (never while a block is staged); afterwards the store answers what a freshly built store over
// the same live records answers. A crashed or missing worker leaves the old graph, is retried (bounded)
// and then falls back to the in-thread rebuild; close() terminates a running worker and removes its file.
//
// The rebuilds are held at their phases through the store's `phase` hook, so blocks interleave at known
// points without sleeps. dim 64 and > 9,000 live records: unfiltered searches then go through the graph
// (exactThreshold(64) = 9,000), so a graph that lost or misplaced a record shows in the answers.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import type { VectorRecord } from '../../src/collections/index.ts';
import { CollectionStore, type RebuildOptions, type RebuildPhase, type StoreChanges } from '../../src/engine/index.ts';
import { GRAPH_GROWTH } from '../../src/engine/hnsw/graph.ts';
import { REBUILD_WORKER_ATTEMPTS } from '../../src/engine/rebuild.ts';
import { clustered, definition, keyOf, makeRecord, mulberry32 } from './helpers.ts';

const DIM = 64;
const BASE = 12_500;
/** Deleted by the block that triggers the rebuild: > max(1024, 25 % of the 9,500 left). */
const TRIGGER_DELETES = 3_000;
const def = definition(DIM, { n: 'i32' });

type Deferred = { promise: Promise<void>; resolve: () => void };
function deferred(): Deferred {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** The live records as the test knows them: id → record (vectors as the store decoded them). */
type Model = Map<string, VectorRecord>;

async function commitBlock(store: CollectionStore, changes: StoreChanges): Promise<void> {
  (await store.prepare(changes))();
}

let work: string;
let baseDir: string;
let baseRecords: VectorRecord[];

before(async () => {
  work = await mkdtemp(join(tmpdir(), 'rebuild-test-'));
  baseDir = join(work, 'base');
  const { vectors } = clustered(BASE, DIM, 31);
  baseRecords = vectors.map((v, i) => makeRecord(i, v, { n: i }));
  // One base graph for every case: each loads the snapshot instead of building 12,500 inserts again.
  const base = new CollectionStore('churn', def);
  await base.apply({ remove: [], upsert: baseRecords });
  await base.save(baseDir);
});

after(async () => {
  await rm(work, { recursive: true, force: true });
});

/** The base store, loaded with the given rebuild options, and the model of its records. */
async function loadBase(options: RebuildOptions): Promise<{ store: CollectionStore; model: Model }> {
  const store = await CollectionStore.load(baseDir, 'churn', def, { rebuild: options });
  const model: Model = new Map(baseRecords.map((r) => [r.id, r]));
  return { store, model };
}

/** The block that triggers the rebuild: every 4th record from 1 on, TRIGGER_DELETES of them. */
function triggerBlock(model: Model): StoreChanges {
  const remove: string[] = [];
  for (let i = 1; remove.length < TRIGGER_DELETES; i += 4) {
    remove.push(keyOf(i));
    model.delete(`id-${i}`);
  }
  return { remove, upsert: [] };
}

function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return 1 - dot / Math.sqrt(na * nb);
}

/** Exact top-k ids over the model (the ground truth both stores are held to). */
function exactTop(model: Model, q: ArrayLike<number>, k: number): string[] {
  return [...model.values()]
    .map((r) => ({ id: r.id, d: cosine(q, r.vector) }))
    .sort((a, b) => a.d - b.d)
    .slice(0, k)
    .map((x) => x.id);
}

/**
 * The store holds exactly the model's records and answers like a store freshly built from them: size,
 * count, get, records, a graph of exactly the live records, self-queries, distances and recall@10.
 */
async function assertLikeFresh(store: CollectionStore, model: Model, seed: number): Promise<void> {
  const fresh = new CollectionStore('fresh', def);
  await fresh.apply({ remove: [], upsert: [...model.values()] });
  assert.equal(store.size, model.size);
  assert.equal(store.count(), fresh.count());
  assert.equal(store.count({ where: 'n < 5000' }), fresh.count({ where: 'n < 5000' }));
  const ids = [...store.records()].map((r) => r.id).sort();
  assert.deepEqual(ids, [...fresh.records()].map((r) => r.id).sort());
  for (const r of model.values()) {
    const got = store.get(r.key);
    assert.equal(got?.id, r.id);
    assert.deepEqual(Array.from(got!.vector), Array.from(fresh.get(r.key)!.vector));
  }
  // The graph holds the live records and nothing else (deleted elements are hidden by hnswlib).
  const g = store.graphStats;
  assert.equal(g.elementCount - g.deleted, store.size);

  const rand = mulberry32(seed);
  const live = [...model.values()];
  let storeHits = 0;
  let freshHits = 0;
  let storeSelf = 0;
  let freshSelf = 0;
  const queries = 24;
  for (let qi = 0; qi < queries; qi++) {
    const self = live[Math.floor(rand() * live.length)]!;
    const res = store.search({ vector: self.vector, k: 10 });
    assert.equal(res.search_mode, 'hnsw');
    if (res.results[0]?.record.id === self.id) storeSelf++;
    for (const hit of res.results) {
      const rec = model.get(hit.record.id);
      assert.ok(rec, `${hit.record.id} is live`);
      assert.ok(Math.abs(hit.distance - cosine(self.vector, rec.vector)) < 1e-4, 'distance of the record found');
    }
    const truth = new Set(exactTop(model, self.vector, 10));
    storeHits += res.results.filter((h) => truth.has(h.record.id)).length;
    const freshRes = fresh.search({ vector: self.vector, k: 10 });
    freshHits += freshRes.results.filter((h) => truth.has(h.record.id)).length;
    if (freshRes.results[0]?.record.id === self.id) freshSelf++;
  }
  // Compared with the fresh build, not absolutely: on these uniform vectors HNSW itself misses the odd record
  // (a fresh graph too, at any width), while a rebuild that lost or misplaced records misses many.
  assert.ok(storeSelf >= freshSelf - 2, `records found as their own nearest: ${storeSelf} vs fresh ${freshSelf}`);
  const recall = storeHits / (queries * 10);
  const freshRecall = freshHits / (queries * 10);
  assert.ok(recall >= 0.75 && recall >= freshRecall - 0.05, `recall ${recall} vs fresh ${freshRecall}`);
}

/** A store whose rebuilds stop at `built` and `caught-up` until the test releases them. */
function gated() {
  const reached = new Map<RebuildPhase, Deferred>();
  const release = new Map<RebuildPhase, Deferred>();
  for (const p of ['built', 'caught-up'] as const) {
    reached.set(p, deferred());
    release.set(p, deferred());
  }
  const phase = (p: RebuildPhase): Promise<void> | undefined => {
    reached.get(p)?.resolve();
    return release.get(p)?.promise;
  };
  return {
    phase,
    reached: (p: RebuildPhase) => reached.get(p)!.promise,
    release: (p: RebuildPhase) => release.get(p)!.resolve(),
  };
}

type Op = { t: 'insert' | 'delete' | 'update'; n: number };

/** One block for an op, applied to the model too (seeded picks; ids above BASE are new). */
function blockOf(op: Op, model: Model, rand: () => number, next: { id: number }): StoreChanges {
  // New vectors near a live one, as a re-embedded or new document of the same corpus would be. Uniform
  // vectors far from every cluster measure something else: hnswlib's in-place replacement of a deleted
  // element (every update reuses one) links such an outlier poorly: 21 of them among 9,500 records cost
  // ~0.12 recall@10 against a fresh build whether they came during the build, after the catch-up or staged
  // at the swap (fast-check seed -926749759, path "1:3:4:2:2", with uniform vectors), which points at the
  // replacement, not at the rebuild's replay (ARCHITECTURE.md §10.7).
  const pool = [...model.values()];
  const vec = () => {
    const near = pool[Math.floor(rand() * pool.length)]!.vector;
    return Array.from({ length: DIM }, (_, i) => near[i]! + (rand() * 2 - 1) * 0.05);
  };
  const pick = (): VectorRecord[] => {
    const live = [...model.values()];
    const out = new Set<VectorRecord>();
    for (let i = 0; i < op.n && i < live.length; i++) out.add(live[Math.floor(rand() * live.length)]!);
    return [...out];
  };
  if (op.t === 'insert') {
    const upsert = Array.from({ length: op.n }, () => {
      const i = next.id++;
      return makeRecord(i, vec(), { n: i });
    });
    for (const r of upsert) model.set(r.id, r);
    return { remove: [], upsert };
  }
  const picked = pick();
  if (op.t === 'delete') {
    for (const r of picked) model.delete(r.id);
    return { remove: picked.map((r) => r.key), upsert: [] };
  }
  // Same id and key, a new vector: the record is replaced in place.
  const upsert = picked.map((r) => makeRecord(Number(r.id.slice(3)), vec(), { n: Number(r.id.slice(3)) }));
  for (const r of upsert) model.set(r.id, r);
  return { remove: [], upsert };
}

describe('graph rebuilds in a worker', () => {
  test('behavior: blocks applied and read during the rebuild; the swap waits for a staged block; the result equals a fresh build', async () => {
    const gate = gated();
    const logs: string[] = [];
    const { store, model } = await loadBase({
      phase: gate.phase,
      tmpDir: work,
      logger: { info: (_f, m) => logs.push(m), warn: (_f, m) => logs.push(m) },
    });
    await commitBlock(store, triggerBlock(model));
    assert.equal(store.rebuildStats.running, true);
    await gate.reached('built');
    // The worker has built its graph; blocks keep coming and readers see them on the old graph.
    const rand = mulberry32(5);
    const next = { id: BASE };
    for (const op of [
      { t: 'insert', n: 30 },
      { t: 'delete', n: 40 },
      { t: 'update', n: 25 },
    ] as const) {
      await commitBlock(store, blockOf(op, model, rand, next));
      assert.equal(store.size, model.size);
    }
    const inserted = model.get(`id-${BASE}`)!;
    assert.equal(store.search({ vector: inserted.vector, k: 1 }).results[0]!.record.id, inserted.id);
    assert.ok(store.graphStats.deleted >= TRIGGER_DELETES, 'the old graph serves until the swap');
    gate.release('built');
    await gate.reached('caught-up');
    await commitBlock(store, blockOf({ t: 'delete', n: 10 }, model, rand, next));
    // A block staged when the new graph is ready: the swap must wait for its commit.
    const staged = blockOf({ t: 'insert', n: 5 }, model, rand, next);
    const commit = await store.prepare(staged);
    gate.release('caught-up');
    await new Promise<void>((resolve) => setImmediate(resolve));
    assert.equal(store.rebuildStats.running, true, 'no swap while a block is staged');
    assert.ok(store.graphStats.deleted >= TRIGGER_DELETES);
    commit();
    await store.rebuilt();
    assert.deepEqual(store.rebuildStats, { running: false, rebuilds: 1, failed: 0 });
    assert.ok(store.graphStats.deleted < 100, `deleted ${store.graphStats.deleted} after the swap`);
    assert.deepEqual(logs, ['graph rebuilt in a worker']);
    await assertLikeFresh(store, model, 1);
    // The temporary graph file is gone; labels keep working after the swap.
    assert.deepEqual((await readdir(work)).sort(), ['base']);
    await commitBlock(store, blockOf({ t: 'update', n: 20 }, model, rand, next));
    await commitBlock(store, blockOf({ t: 'insert', n: 20 }, model, rand, next));
    await assertLikeFresh(store, model, 2);
    await store.close();
  });

  test('property: any inserts, deletes and updates around the rebuild leave the store equal to a fresh build', async () => {
    const op = fc.record({
      t: fc.constantFrom('insert' as const, 'delete' as const, 'update' as const),
      n: fc.integer({ min: 1, max: 60 }),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(op, { maxLength: 5 }),
        fc.array(op, { maxLength: 4 }),
        fc.option(op, { nil: undefined }),
        fc.integer(),
        async (duringBuild, afterCatchUp, stagedAtSwap, seed) => {
          const gate = gated();
          const { store, model } = await loadBase({ phase: gate.phase, tmpDir: work });
          const rand = mulberry32(seed);
          const next = { id: BASE };
          await commitBlock(store, triggerBlock(model));
          await gate.reached('built');
          for (const o of duringBuild) await commitBlock(store, blockOf(o, model, rand, next));
          gate.release('built');
          await gate.reached('caught-up');
          for (const o of afterCatchUp) await commitBlock(store, blockOf(o, model, rand, next));
          const commit = stagedAtSwap && (await store.prepare(blockOf(stagedAtSwap, model, rand, next)));
          gate.release('caught-up');
          await new Promise<void>((resolve) => setImmediate(resolve));
          assert.equal(store.rebuildStats.running, Boolean(commit));
          if (commit) commit();
          await store.rebuilt();
          assert.equal(store.rebuildStats.rebuilds, 1);
          await assertLikeFresh(store, model, seed);
          await store.close();
        },
      ),
      { numRuns: 4 },
    );
  });
});

describe('graph rebuilds: failures and shutdown', () => {
  test('failure: a crashing worker leaves the old graph and correct answers, is retried, then the store rebuilds in-thread', async () => {
    const warnings: { failures: unknown; message: string }[] = [];
    const { store, model } = await loadBase({
      workerUrl: new URL('./fixtures/crashingRebuildWorker.mjs', import.meta.url),
      retryMs: 0,
      tmpDir: work,
      logger: { info: () => undefined, warn: (f, message) => warnings.push({ failures: f.failures, message }) },
    });
    await commitBlock(store, triggerBlock(model));
    const rand = mulberry32(9);
    const next = { id: BASE };
    for (let attempt = 1; attempt <= REBUILD_WORKER_ATTEMPTS; attempt++) {
      await store.rebuilt();
      assert.deepEqual(store.rebuildStats, { running: false, rebuilds: 0, failed: attempt });
      assert.ok(store.graphStats.deleted >= TRIGGER_DELETES, 'the old graph stays');
      // The next block retries (retryMs 0); deletes, so the old graph's deleted count only grows.
      await commitBlock(store, blockOf({ t: 'delete', n: 3 }, model, rand, next));
    }
    // The last block found REBUILD_WORKER_ATTEMPTS failures: it rebuilt on the store's queue instead.
    await store.rebuilt();
    assert.equal(store.rebuildStats.failed, REBUILD_WORKER_ATTEMPTS);
    assert.equal(store.graphStats.deleted, 0);
    // The graph rebuilt here has the room of a grown one (one ×GRAPH_GROWTH step, + 16), no more.
    const { elementCount, capacity } = store.graphStats;
    assert.ok(
      capacity >= elementCount && capacity <= Math.ceil(elementCount * GRAPH_GROWTH) + 16,
      `capacity ${capacity} for ${elementCount} elements`,
    );
    assert.deepEqual(
      warnings.map((w) => w.failures),
      Array.from({ length: REBUILD_WORKER_ATTEMPTS }, (_, i) => i + 1),
    );
    assert.match(warnings.at(-1)!.message, /main thread/);
    assert.match(warnings[0]!.message, /keeping the current graph/);
    assert.deepEqual((await readdir(work)).sort(), ['base'], 'no temporary file left');
    await assertLikeFresh(store, model, 3);
  });

  test('failure: a worker module that cannot be found leaves the store correct', async () => {
    const { store, model } = await loadBase({
      workerUrl: new URL('./fixtures/no-such-worker.mjs', import.meta.url),
      tmpDir: work,
    });
    await commitBlock(store, triggerBlock(model));
    await store.rebuilt();
    assert.deepEqual(store.rebuildStats, { running: false, rebuilds: 0, failed: 1 });
    // Within the retry delay (REBUILD_RETRY_MS) a block does not start another attempt.
    await commitBlock(store, { remove: [keyOf(0)], upsert: [] });
    model.delete('id-0');
    assert.equal(store.rebuildStats.running, false);
    assert.deepEqual((await readdir(work)).sort(), ['base']);
    await assertLikeFresh(store, model, 4);
  });

  test('shutdown: close() terminates a running worker and removes its file; the store keeps answering', async () => {
    let closing: Promise<void> | undefined;
    let building: Deferred | undefined = deferred();
    const { store, model } = await loadBase({
      tmpDir: work,
      phase: (p) => {
        if (p !== 'building') return;
        building?.resolve();
        // Not awaited here: close() waits for this rebuild to end.
        closing = store.close();
      },
    });
    await commitBlock(store, triggerBlock(model));
    await building.promise;
    building = undefined;
    assert.ok(closing);
    await closing;
    assert.deepEqual(store.rebuildStats, { running: false, rebuilds: 0, failed: 0 });
    assert.deepEqual((await readdir(work)).sort(), ['base'], 'the worker and its temporary file are gone');
    assert.ok(store.graphStats.deleted >= TRIGGER_DELETES);
    // A closed store starts no more rebuilds, and still applies blocks and answers.
    await commitBlock(store, { remove: [keyOf(0)], upsert: [] });
    model.delete('id-0');
    assert.equal(store.rebuildStats.running, false);
    await assertLikeFresh(store, model, 5);
  });
});
