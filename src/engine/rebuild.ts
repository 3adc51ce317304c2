// Vacuum phase of a collection store: once deletions or spent labels pile up, the graph is rebuilt
// from the live records with compact labels. The build runs in a worker thread (rebuildThread.ts), so
// blocks keep being applied to the old graph meanwhile and following the chain never stalls behind it:
//
//   1. hand-off: the live records' vectors are copied (in slices) into one buffer that is transferred
//      to the worker; label i of the new graph is the i-th live slot;
//   2. the worker builds and writes the graph to a temporary file; the main thread reads it back with
//      hnswlib's async readIndex;
//   3. catch-up (in slices): every slot whose record changed since the hand-off (inserted, deleted,
//      replaced) is replayed into the new graph. A change is found by record identity: each commit
//      places a fresh record object, and a live slot's vector never changes while its record stays;
//   4. swap, synchronously and only at a block boundary (no block staged, `t.pending` false): a last
//      catch-up of the blocks committed during step 3, then graph and label maps are replaced at once.
//
// Readers never see the new graph before step 4. A failed or crashed worker leaves the old graph in
// place and is retried after a delay; after REBUILD_WORKER_ATTEMPTS failures in a row the store falls
// back to the in-thread rebuild (which holds the store's write queue while it runs).

import type { CollectionDefinition } from '../collections/index.ts';
import { GRAPH_GROWTH, type Graph } from './hnsw/graph.ts';
import { HalfGraph } from './hnsw/halfGraph.ts';
import { REBUILD_DELETED_MIN, REBUILD_DELETED_RATIO } from './hnsw/params.ts';
import type { StoredRecord } from './recordView.ts';
import { buildInWorker, REBUILD_WORKER_URL, RebuildCancelledError, type WorkerBuild } from './rebuildThread.ts';
import { SLICE_MS, yieldToLoop } from './slices.ts';
import { emptyGraph, graphParams, growInt32, type SlotTable } from './slotTable.ts';

/** Compact labels (full rebuild) once this many times more labels were issued than records live. */
const LABEL_COMPACT_RATIO = 4;
const LABEL_COMPACT_MIN = 1 << 16;

/** Worker failures in a row after which a store rebuilds on its own thread instead. */
export const REBUILD_WORKER_ATTEMPTS = 3;
/** Delay before the first retry of a failed worker rebuild; doubled after each further failure. */
export const REBUILD_RETRY_MS = 30_000;
/** Catch-up passes over the slots before the synchronous swap (each replays what the previous missed). */
const CATCH_UP_PASSES = 8;
/** A catch-up pass that replays at most this many slots is followed by the swap. */
const CATCH_UP_SWAP_AT = 64;
/**
 * The capacity of a rebuilt graph of `live` elements, and of its label table: one growth step of room
 * for the changes replayed into it (GRAPH_GROWTH, what a graph just grown has, so a rebuilt store holds
 * no more unused room than a grown one), plus 16. A replay past it grows the graph as any insert does.
 */
const rebuiltCapacity = (live: number) => Math.ceil(live * GRAPH_GROWTH) + 16;

/**
 * Where a rebuild stands: `started` (before the hand-off), `building` (the worker runs), `built` (its
 * graph is read back), `caught-up` (replayed, waiting for the swap). Tests hold it at a phase.
 */
export type RebuildPhase = 'started' | 'building' | 'built' | 'caught-up';

export type RebuildLogger = {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
};

export type RebuildOptions = {
  logger?: RebuildLogger;
  /** The worker module (tests inject a broken one). */
  workerUrl?: URL;
  /** Where the worker writes its graph file (default: the OS temporary directory). */
  tmpDir?: string;
  /** Delay before the first retry after a failure (default REBUILD_RETRY_MS). */
  retryMs?: number;
  /** `in-thread` rebuilds on the store's write queue, as before workers (benchmarks compare the two). */
  mode?: 'worker' | 'in-thread';
  /** Called at each phase; the rebuild waits for the promise it returns (tests interleave blocks). */
  phase?: (phase: RebuildPhase) => Promise<void> | void;
};

/** Whether the graph carries enough deleted elements or spent labels to be rebuilt. */
export function needsRebuild(t: SlotTable): boolean {
  if (t.graph.deleted > Math.max(REBUILD_DELETED_MIN, t.live * REBUILD_DELETED_RATIO)) return true;
  return t.nextLabel > Math.max(LABEL_COMPACT_MIN, t.live * LABEL_COMPACT_RATIO);
}

/** The vector the graph should hold for a live slot (read out of the current graph). */
function vectorOf(t: SlotTable, slot: number): Float32Array {
  return t.view(slot);
}

/**
 * Rebuilds the graph from the live records with compact labels, on this thread. The caller runs it on
 * the store's write queue, so no write interleaves (the fallback when workers fail).
 * @param t the store's table
 * @param def the collection's definition (build parameters)
 */
export async function rebuildGraph(t: SlotTable, def: CollectionDefinition): Promise<void> {
  const capacity = rebuiltCapacity(t.live);
  const graph = emptyGraph(t.ops, def, capacity);
  const labelSlot = new Int32Array(Math.max(64, capacity)).fill(-1);
  const slotLabel = new Int32Array(t.slotLabel.length).fill(-1);
  let label = 0;
  let t0 = performance.now();
  for (let s = 0; s < t.slotCount; s++) {
    if (t.records[s] === undefined) continue;
    graph.add(vectorOf(t, s), label);
    labelSlot[label] = s;
    slotLabel[s] = label;
    label++;
    if ((label & 15) === 15 && performance.now() - t0 > SLICE_MS) {
      await yieldToLoop();
      t0 = performance.now();
    }
  }
  t.graph = graph;
  t.labelSlot = labelSlot;
  t.slotLabel = slotLabel;
  t.nextLabel = label;
}

/** Marks a slot whose record changed while its vector was being copied: the label is dropped later. */
const STALE = Object.freeze({}) as StoredRecord;

/** The new graph and what it holds, per slot, while it catches up with the committed records. */
type Shadow = {
  graph: Graph;
  /** The record each slot's label stands for (undefined: no label). */
  held: (StoredRecord | undefined)[];
  slotLabel: Int32Array;
  labelSlot: Int32Array;
  nextLabel: number;
};

/**
 * The worker rebuilds of one store: started after a commit when `needsRebuild`, swapped in at a block
 * boundary, retried (bounded) after failures.
 */
export class GraphRebuilder {
  readonly #t: SlotTable;
  readonly #def: () => CollectionDefinition;
  readonly #name: string;
  readonly #options: RebuildOptions;
  /** Queues a task on the store's write queue (the in-thread fallback). */
  readonly #exclusive: (task: () => Promise<void>) => Promise<void>;
  #running: Promise<void> | undefined;
  #build: WorkerBuild | undefined;
  /** A caught-up shadow waiting for the block boundary. */
  #ready: { shadow: Shadow; swapped: () => void } | undefined;
  #failures = 0;
  #retryAt = 0;
  #closed = false;
  /** Completed worker rebuilds and failed attempts. */
  rebuilds = 0;
  failed = 0;

  constructor(
    t: SlotTable,
    name: string,
    def: () => CollectionDefinition,
    exclusive: (task: () => Promise<void>) => Promise<void>,
    options: RebuildOptions = {},
  ) {
    this.#t = t;
    this.#name = name;
    this.#def = def;
    this.#exclusive = exclusive;
    this.#options = options;
  }

  /** Whether a rebuild is in flight. */
  get running(): boolean {
    return this.#running !== undefined;
  }

  /** Resolves once no rebuild is in flight (immediately when none is). */
  async idle(): Promise<void> {
    while (this.#running !== undefined) await this.#running;
  }

  /**
   * Called at the end of every commit (a block boundary): swaps in a caught-up graph, or starts a
   * rebuild when the graph needs one.
   */
  committed(): void {
    if (this.#closed) return;
    if (this.#ready !== undefined && !this.#t.pending) {
      this.#swap();
      return;
    }
    if (this.#running !== undefined || !needsRebuild(this.#t)) return;
    if (this.#failures >= REBUILD_WORKER_ATTEMPTS || this.#options.mode === 'in-thread') {
      this.#track(this.#exclusive(() => rebuildGraph(this.#t, this.#def())));
      return;
    }
    if (Date.now() < this.#retryAt) return;
    this.#track(this.#run());
  }

  /** Stops a running rebuild (its worker and temporary file); the current graph stays. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#ready?.swapped();
    this.#ready = undefined;
    await this.#build?.dispose();
    await this.idle();
  }

  #track(run: Promise<void>): void {
    // The worker path handles its own failures; an in-thread rebuild that throws keeps the old graph.
    const logged = run.catch((error: Error) =>
      this.#options.logger?.warn({ collection: this.#name, error: error.message }, 'graph rebuild failed'),
    );
    const tracked: Promise<void> = logged.finally(() => {
      if (this.#running === tracked) this.#running = undefined;
    });
    this.#running = tracked;
  }

  async #run(): Promise<void> {
    const started = performance.now();
    try {
      await this.#options.phase?.('started');
      const shadow = await this.#buildShadow();
      if (shadow === undefined) return;
      await this.#options.phase?.('built');
      if (this.#closed) return;
      await this.#catchUp(shadow);
      await this.#options.phase?.('caught-up');
      if (this.#closed) return;
      await new Promise<void>((swapped) => {
        this.#ready = { shadow, swapped };
        if (!this.#t.pending) this.#swap();
      });
      if (this.#closed) return;
      this.#failures = 0;
      this.rebuilds++;
      this.#options.logger?.info(
        { collection: this.#name, live: this.#t.live, ms: Math.round(performance.now() - started) },
        'graph rebuilt in a worker',
      );
    } catch (error) {
      if (error instanceof RebuildCancelledError || this.#closed) return;
      this.#failures++;
      this.failed++;
      this.#retryAt = Date.now() + (this.#options.retryMs ?? REBUILD_RETRY_MS) * 2 ** (this.#failures - 1);
      const fallback = this.#failures >= REBUILD_WORKER_ATTEMPTS;
      this.#options.logger?.warn(
        { collection: this.#name, error: (error as Error).message, failures: this.#failures },
        fallback
          ? 'graph rebuild in a worker failed; rebuilding on the main thread from now on'
          : 'graph rebuild in a worker failed; keeping the current graph and retrying later',
      );
    } finally {
      this.#build = undefined;
    }
  }

  /** Steps 1 and 2: hand-off, worker build, read back. */
  async #buildShadow(): Promise<Shadow | undefined> {
    const t = this.#t;
    const def = this.#def();
    const dim = def.dim;
    // The live slots now; their vectors are copied in slices, and a slot whose record changed before
    // its copy is marked STALE so the catch-up drops its label.
    const slotCount = t.slotCount;
    const held: (StoredRecord | undefined)[] = t.records.slice(0, slotCount);
    const slots: number[] = [];
    for (let s = 0; s < slotCount; s++) if (held[s] !== undefined) slots.push(s);
    const vectors = new Float32Array(slots.length * dim);
    let t0 = performance.now();
    for (let i = 0; i < slots.length; i++) {
      const s = slots[i]!;
      if (t.records[s] !== held[s]) held[s] = STALE;
      vectors.set(vectorOf(t, s), i * dim);
      if ((i & 255) === 255 && performance.now() - t0 > SLICE_MS) {
        await yieldToLoop();
        if (this.#closed) return undefined;
        t0 = performance.now();
      }
    }
    const capacity = rebuiltCapacity(slots.length);
    const build = buildInWorker(
      {
        metric: def.metric,
        dim,
        m: def.index.m,
        efConstruction: def.index.ef_construction,
        capacity,
        vectors,
      },
      { workerUrl: this.#options.workerUrl ?? REBUILD_WORKER_URL, tmpDir: this.#options.tmpDir },
    );
    this.#build = build;
    try {
      await this.#options.phase?.('building');
      const path = await build.done;
      if (this.#closed) return undefined;
      const graph = await HalfGraph.read(t.ops, dim, graphParams(def), path);
      if (graph.elementCount !== slots.length)
        throw new Error(`rebuilt graph holds ${graph.elementCount} elements, expected ${slots.length}`);
      const slotLabel = new Int32Array(Math.max(64, t.slotLabel.length)).fill(-1);
      const labelSlot = new Int32Array(Math.max(64, capacity)).fill(-1);
      for (let i = 0; i < slots.length; i++) {
        slotLabel[slots[i]!] = i;
        labelSlot[i] = slots[i]!;
      }
      return { graph, held, slotLabel, labelSlot, nextLabel: slots.length };
    } finally {
      await build.dispose();
    }
  }

  /** Step 3: replays the committed changes into the shadow in slices until few remain. */
  async #catchUp(shadow: Shadow): Promise<void> {
    for (let pass = 0; pass < CATCH_UP_PASSES; pass++) {
      let replayed = 0;
      let t0 = performance.now();
      const end = Math.max(this.#t.slotCount, shadow.held.length);
      for (let s = 0; s < end; s++) {
        if (!this.#replay(shadow, s)) continue;
        replayed++;
        if ((replayed & 15) === 15 && performance.now() - t0 > SLICE_MS) {
          await yieldToLoop();
          if (this.#closed) return;
          t0 = performance.now();
        }
      }
      if (replayed <= CATCH_UP_SWAP_AT) return;
    }
  }

  /** Brings one slot of the shadow up to the committed record; false when it already was. */
  #replay(shadow: Shadow, s: number): boolean {
    const t = this.#t;
    const now = t.records[s];
    const was = shadow.held[s];
    if (now === was) return false;
    if (was !== undefined) {
      const label = shadow.slotLabel[s]!;
      shadow.graph.remove(label);
      shadow.labelSlot[label] = -1;
      shadow.slotLabel[s] = -1;
    }
    if (now !== undefined) {
      const label = shadow.nextLabel++;
      shadow.graph.reserve(1);
      shadow.labelSlot = growInt32(shadow.labelSlot, label + 1, -1);
      shadow.slotLabel = growInt32(shadow.slotLabel, s + 1, -1);
      shadow.graph.add(vectorOf(t, s), label);
      shadow.labelSlot[label] = s;
      shadow.slotLabel[s] = label;
    }
    shadow.held[s] = now;
    return true;
  }

  /** Step 4, synchronous at a block boundary: the last changes, then the swap readers see at once. */
  #swap(): void {
    const ready = this.#ready;
    if (ready === undefined) return;
    this.#ready = undefined;
    const { shadow } = ready;
    const t = this.#t;
    const end = Math.max(t.slotCount, shadow.held.length);
    for (let s = 0; s < end; s++) this.#replay(shadow, s);
    t.graph = shadow.graph;
    t.labelSlot = shadow.labelSlot;
    t.slotLabel = growInt32(shadow.slotLabel, t.slotLabel.length, -1);
    t.nextLabel = shadow.nextLabel;
    ready.swapped();
  }
}
