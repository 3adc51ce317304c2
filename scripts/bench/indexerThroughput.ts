// Indexer throughput: catch-up when tailing blocks, bootstrap with the pinned-block
// query, restart from a snapshot, against raw hnswlib-node inserting the same vectors. Every party runs
// in a process of its own, as in a deployment: the devnet (`arkivector devnet`), the writer (this
// process, through the unmodified @arkiv-network/sdk), each indexer phase, and the raw baseline, so no
// measurement shares its thread with the chain's JSON-RPC serving or inherits another phase's heap.
// Children are this bench's entry forked with `--role throughput-child`; they answer over IPC.
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createWalletClient, http } from '@arkiv-network/sdk';
import { privateKeyToAccount } from '@arkiv-network/sdk/accounts';
import { localhost } from '@arkiv-network/sdk/chains';
import hnswlib from 'hnswlib-node';
import { createArkivV1Source } from '../../src/chain/index.ts';
import { createHttpTransport } from '../../src/chain/transport.ts';
import {
  encodeCollectionEntity,
  encodeVectorEntity,
  HALF_TO_FLOAT32,
  validateCollectionDefinition,
} from '../../src/collections/index.ts';
import { HNSW_RANDOM_SEED } from '../../src/engine/hnsw/params.ts';
import { halfvecOf } from '../../src/engine/vectorSlab.ts';
import { childArgs } from './args.ts';
import { spawnDevnet } from './devnetProcess.ts';
import { mulberry32 } from '../../test/helpers/generators.ts';

/** How long one indexer phase may take before the bench gives up (100k × 384 takes minutes). */
const PHASE_TIMEOUT_MS = 1_800_000;
const VECTOR_SEED = 7;

export type Phase = 'catch-up' | 'bootstrap' | 'restart';

/** The child's orders, as argv (`--role throughput-child --task JSON`). */
export type ChildTask =
  | { kind: 'raw'; entities: number; dim: number }
  | {
      kind: 'indexer';
      phase: Phase;
      rpc: string;
      chainId: number;
      head: number;
      entities: number;
      startBlock?: number;
      dataDir?: string;
      /** Another checkout of arkivector whose indexer, chain source and stores run this phase. */
      checkout?: string;
    };

/** What an indexer child reports; times in seconds. */
export interface PhaseTiming {
  /** From `start()` to the head applied: the figure docs/benchmarks.md's table gives. */
  seconds: number;
  /** CPU time of the process (all threads) over `seconds`: steadier than wall time on a loaded machine. */
  cpu_seconds: number;
  /** The child's own start (modules, addon) before the indexer started. */
  process_start_seconds: number;
  /** Time `blocks()` calls were in flight (fetch over JSON-RPC and decode; a prefetch overlaps the apply). */
  blocks_fetch_seconds: number;
  /** Restart only: the indexer's snapshot load (header check, tracked entities, stores, resolver). */
  snapshot_load_seconds?: number;
  /** Restart only: of which reading the collection stores (graph, vectors, records). */
  store_load_seconds?: number;
}

/**
 * Binary16-rounded uniform vectors in [-1, 1), the values the chain keeps and the engine indexes; the
 * writer and the raw baseline draw the same sequence from the same seed.
 */
export function* benchVectors(total: number, dim: number): Generator<number[]> {
  const uniform = mulberry32(VECTOR_SEED);
  const draw = () => uniform() * 2 - 1;
  for (let n = 0; n < total; n++) {
    const bytes = halfvecOf(Float32Array.from({ length: dim }, draw));
    const out = new Array<number>(dim);
    for (let i = 0; i < dim; i++) out[i] = HALF_TO_FLOAT32[bytes[2 * i]! | (bytes[2 * i + 1]! << 8)]!;
    yield out;
  }
}

const benchInput = (dim: number) => ({
  dim,
  metric: 'cosine' as const,
  attributes: { topic: 'str' as const, rank: 'i32' as const },
});

async function rawInsert(entities: number, dim: number): Promise<{ seconds: number; cpu_seconds: number }> {
  const definition = validateCollectionDefinition(benchInput(dim));
  // Float32 storage (half the bytes of number[]); the conversion per insert is part of any real insert too.
  const halves = new Float32Array(entities * dim);
  let n = 0;
  for (const vector of benchVectors(entities, dim)) halves.set(vector, dim * n++);
  const raw = new hnswlib.HierarchicalNSW('cosine', dim);
  raw.initIndex(entities, definition.index.m, definition.index.ef_construction, HNSW_RANDOM_SEED);
  const point = new Array<number>(dim);
  const started = process.hrtime.bigint();
  const cpuStarted = process.cpuUsage();
  for (let p = 0; p < entities; p++) {
    for (let i = 0; i < dim; i++) point[i] = halves[p * dim + i]!;
    raw.addPoint(point, p);
  }
  const cpu = process.cpuUsage(cpuStarted);
  return { seconds: Number(process.hrtime.bigint() - started) / 1e9, cpu_seconds: (cpu.user + cpu.system) / 1e6 };
}

async function indexerPhase(task: Extract<ChildTask, { kind: 'indexer' }>): Promise<PhaseTiming> {
  // The indexer, its chain source and its stores come from the checkout under test (this one by default),
  // so a baseline checkout is measured with its own code against the same chain.
  const root = task.checkout ?? new URL('../..', import.meta.url).pathname;
  const from = <T>(path: string): Promise<T> => import(pathToFileURL(join(root, path)).href) as Promise<T>;
  const { createArkivV1Source, createHttpTransport } =
    await from<typeof import('../../src/chain/index.ts')>('src/chain/index.ts');
  const { engineStores } = await from<typeof import('../../src/engine/storeFactory.ts')>('src/engine/storeFactory.ts');
  const { ChainIndexer } = await from<typeof import('../../indexer/indexer.ts')>('indexer/indexer.ts');
  const processStart = process.uptime();
  const transport = createHttpTransport({ url: task.rpc });
  const v1 = createArkivV1Source(transport);
  let blocksFetch = 0n;
  const source = {
    ...v1,
    async blocks(from: number, to: number) {
      const started = process.hrtime.bigint();
      try {
        return await v1.blocks(from, to);
      } finally {
        blocksFetch += process.hrtime.bigint() - started;
      }
    },
  };
  let storeLoad = 0n;
  const stores = {
    ...engineStores,
    async load(...args: Parameters<typeof engineStores.load>) {
      const started = process.hrtime.bigint();
      try {
        return await engineStores.load(...args);
      } finally {
        storeLoad += process.hrtime.bigint() - started;
      }
    },
  };
  // The indexer logs the snapshot load's duration before it announces the block (a progress phase comes
  // after the announcement, too late for the waiter).
  let snapshotLoadMs: number | undefined;
  const logger = {
    info(fields: Record<string, unknown>, message: string) {
      if (message === 'snapshot loaded' && typeof fields.ms === 'number') snapshotLoadMs = fields.ms;
    },
    warn() {},
    error() {},
    debug() {},
  };
  const indexer = new ChainIndexer({
    source,
    stores,
    logger,
    chainId: task.chainId,
    blockTimeSeconds: 0.5,
    batchSize: 20,
    ...(task.startBlock === undefined ? {} : { startBlock: task.startBlock }),
    ...(task.dataDir === undefined ? {} : { dataDir: task.dataDir }),
  });
  try {
    const started = process.hrtime.bigint();
    const cpuStarted = process.cpuUsage();
    indexer.start();
    if (!(await indexer.waitForBlock(task.head, PHASE_TIMEOUT_MS)))
      throw new Error(`${task.phase}: did not finish (${indexer.lastError})`);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const cpu = process.cpuUsage(cpuStarted);
    const size = indexer.collections.get('bench')?.stats.live_entities ?? 0;
    if (size !== task.entities) throw new Error(`${task.phase}: ${size} entities indexed, expected ${task.entities}`);
    if (task.phase === 'restart' && indexer.counters.snapshotsLoaded !== 1)
      throw new Error('the restart did not load the snapshot');
    const timing: PhaseTiming = {
      seconds,
      cpu_seconds: (cpu.user + cpu.system) / 1e6,
      process_start_seconds: processStart,
      blocks_fetch_seconds: Number(blocksFetch) / 1e9,
    };
    if (task.phase === 'restart' && snapshotLoadMs !== undefined) {
      timing.snapshot_load_seconds = snapshotLoadMs / 1000;
      timing.store_load_seconds = Number(storeLoad) / 1e9;
    }
    return timing;
  } finally {
    await indexer.stop(); // the bootstrap phase writes the snapshot the restart loads
    await transport.close();
  }
}

/** The child side: runs one task, sends its result, exits (so a --cpu-prof profile gets written). */
export async function throughputChild(taskJson: string): Promise<void> {
  const task = JSON.parse(taskJson) as ChildTask;
  const result = task.kind === 'raw' ? await rawInsert(task.entities, task.dim) : await indexerPhase(task);
  await new Promise<void>((resolve, reject) =>
    process.send?.({ result }, (error: Error | null) => (error ? reject(error) : resolve())),
  );
  process.disconnect();
}

async function runChild<T>(script: string, task: ChildTask, profileDir?: string): Promise<T> {
  const child = fork(script, childArgs(['--role', 'throughput-child', '--task', JSON.stringify(task)]), {
    execArgv: ['--import', 'tsx', ...(profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [])],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = once(child, 'exit');
  const [first] = (await Promise.race([once(child, 'message'), exited])) as [{ result: T } | number | null];
  const [code] = (await exited) as [number | null];
  if (first === null || typeof first !== 'object') throw new Error(`${JSON.stringify(task)}: child exited (${code})`);
  if (code !== 0) throw new Error(`${JSON.stringify(task)}: child exited with ${code}`);
  return first.result;
}

export interface ThroughputOptions {
  entities: number;
  dim: number;
  perTx: number;
  /** Rounds of raw inserts and catch-up, alternating; the best of each is reported. */
  rounds: number;
  /** Another checkout whose catch-up runs in each round too (with its own node_modules). */
  baseline?: string;
  /** Write CPU profiles of the indexer children (not the devnet) into DIR/catch-up, DIR/bootstrap, DIR/restart. */
  profileDir?: string;
  log: (line: string) => void;
}

/**
 * Fills a devnet child through the SDK, then measures each phase in a fresh child process.
 * @param script this bench's entry (forked for the children)
 */
export async function runThroughputBench(script: string, options: ThroughputOptions) {
  const { entities: total, dim, perTx, log } = options;
  const devnet = await spawnDevnet(0);
  const transport = createHttpTransport({ url: devnet.url });
  const chain = createArkivV1Source(transport);
  const dataDir = await mkdtemp(join(tmpdir(), 'arkivector-bench-'));
  const load = { start: loadavg()[0] ?? 0, end: 0 };
  try {
    const wallet = createWalletClient({
      chain: localhost,
      transport: http(devnet.url),
      account: privateKeyToAccount(devnet.privateKey),
    });
    const input = benchInput(dim);
    const definition = validateCollectionDefinition(input);
    await wallet.createEntity({ ...encodeCollectionEntity('bench', input), expiresIn: 10_000_000 });
    const startBlock = await chain.head();
    const vectors = benchVectors(total, dim);
    const writeStarted = Date.now();
    for (let written = 0; written < total; written += perTx) {
      const creates = Array.from({ length: Math.min(perTx, total - written) }, (_, i) => {
        const encoded = encodeVectorEntity(
          {
            collection: 'bench',
            id: `v${written + i}`,
            vector: vectors.next().value as number[],
            document: `document ${written + i}`,
            attributes: { topic: `t${(written + i) % 7}`, rank: written + i },
          },
          definition,
        );
        return {
          payload: encoded.payload,
          contentType: encoded.contentType,
          attributes: encoded.attributes,
          expiresIn: 10_000_000,
        };
      });
      await wallet.mutateEntities({ creates });
      if (process.stderr.isTTY) process.stderr.write(`\rwriting: ${written + creates.length} / ${total}`);
    }
    const head = await chain.head();
    const blocks = head - startBlock;
    log(
      `\nwrote ${total} entities (dim ${dim}) in ${blocks} blocks in ${((Date.now() - writeStarted) / 1000).toFixed(1)} s`,
    );

    const profileDir = (phase: Phase) => options.profileDir && join(options.profileDir, phase);
    const indexerTask = { kind: 'indexer' as const, rpc: devnet.url, chainId: devnet.chainId, head, entities: total };
    // Raw baseline and catch-up alternate, each round in fresh processes, and the best of each counts, so
    // load that comes and goes on a shared machine hits both alike. Raw goes first: no indexer's heap or
    // GC debt before it.
    let raw: { seconds: number; cpu_seconds: number } | undefined;
    let catchUp: PhaseTiming | undefined;
    let baseline: PhaseTiming | undefined;
    for (let round = 1; round <= options.rounds; round++) {
      const r = await runChild<{ seconds: number; cpu_seconds: number }>(script, { kind: 'raw', entities: total, dim });
      const c = await runChild<PhaseTiming>(
        script,
        { ...indexerTask, phase: 'catch-up', startBlock },
        round === 1 ? profileDir('catch-up') : undefined,
      );
      const both = (t: { seconds: number; cpu_seconds: number }) =>
        `${t.seconds.toFixed(2)} s (CPU ${t.cpu_seconds.toFixed(2)} s)`;
      let line = `round ${round}: raw hnswlib-node inserts ${both(r)}, catch-up ${both(c)}`;
      if (options.baseline) {
        const b = await runChild<PhaseTiming>(script, {
          ...indexerTask,
          phase: 'catch-up',
          startBlock,
          checkout: resolve(options.baseline),
        });
        line += `, baseline catch-up ${both(b)}`;
        if (!baseline || b.seconds < baseline.seconds) baseline = b;
      }
      log(line);
      if (!raw || r.seconds < raw.seconds) raw = r;
      if (!catchUp || c.seconds < catchUp.seconds) catchUp = c;
    }
    if (!raw || !catchUp) throw new Error('--rounds must be at least 1');
    const bootstrap = await runChild<PhaseTiming>(
      script,
      { ...indexerTask, phase: 'bootstrap', dataDir },
      profileDir('bootstrap'),
    );
    log(`bootstrap: ${bootstrap.seconds.toFixed(2)} s`);
    const restart = await runChild<PhaseTiming>(
      script,
      { ...indexerTask, phase: 'restart', dataDir },
      profileDir('restart'),
    );
    load.end = loadavg()[0] ?? 0;

    return {
      machine: { cpus: cpus().length, node: process.version, load_average_1m: load },
      entities: total,
      dim,
      blocks,
      rounds: options.rounds,
      /** Every phase in a process of its own; the devnet in another. */
      processes: 'separate',
      catch_up: {
        seconds: catchUp.seconds,
        blocks_per_second: blocks / catchUp.seconds,
        entities_per_second: total / catchUp.seconds,
        cpu_seconds: catchUp.cpu_seconds,
        blocks_fetch_seconds: catchUp.blocks_fetch_seconds,
      },
      bootstrap: { seconds: bootstrap.seconds, entities_per_second: total / bootstrap.seconds },
      snapshot_restart: {
        seconds: restart.seconds,
        process_start_seconds: restart.process_start_seconds,
        snapshot_load_seconds: restart.snapshot_load_seconds,
        store_load_seconds: restart.store_load_seconds,
      },
      full_rebuild: { seconds: bootstrap.seconds },
      ...(baseline && {
        baseline: {
          checkout: resolve(options.baseline ?? ''),
          catch_up_seconds: baseline.seconds,
          catch_up_cpu_seconds: baseline.cpu_seconds,
          catch_up_vs_raw_insert: raw.seconds / baseline.seconds,
        },
      }),
      raw_hnswlib_insert: {
        seconds: raw.seconds,
        cpu_seconds: raw.cpu_seconds,
        entities_per_second: total / raw.seconds,
      },
      /** Targets: catch-up ≥ 0.8× the raw insert rate; restart ≥ 20× faster than a rebuild. */
      catch_up_vs_raw_insert: raw.seconds / catchUp.seconds,
      /** The same ratio in CPU time (all threads), which load on the machine moves less. */
      catch_up_vs_raw_insert_cpu: raw.cpu_seconds / catchUp.cpu_seconds,
      restart_speedup_vs_rebuild: bootstrap.seconds / restart.seconds,
    };
  } finally {
    await transport.close();
    await devnet.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}
