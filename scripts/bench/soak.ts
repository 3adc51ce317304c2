// `npm run bench:soak`: the memory a write daemon keeps per written entity, against a replica's. One
// devnet (its own process, so the chain's state is never counted), one `serve` with a signer (the
// daemon), `--replicas` without one, `--writers` REST writers (single-entity upserts, wait modes
// alternating indexed / receipt / none) and `--readers` searching both. Each node's heap and RSS are read
// after a warm-up and after the writes, once every node indexed them all, each time after forced full
// collections (soakProbe.mjs, preloaded into every node); the differences divided by the entities
// written are the bytes each node keeps per entity. Every acknowledged write must be held by every node.
//
// Usage: npm run bench:soak -- [--protocol dbchain|v1] [--n N | --seconds S] [--warmup N] [--writers W]
//   [--readers R] [--replicas K] [--dim D] [--out FILE] [--heap-snapshots DIR]
// --seconds: write for S seconds instead of N writes. --heap-snapshots: a heap snapshot of every node at
// both readings too, whose live heap (self sizes) per written entity shows where the bytes go.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnDevnet } from './devnetProcess.ts';
import { killChildren, type ServeProcess, spawnServe } from '../../test/helpers/serveProcess.ts';
import { benchArgs, commandLine } from './args.ts';
import { writeJson } from './output.ts';

const values = benchArgs({
  protocol: { type: 'string', default: 'dbchain' },
  n: { type: 'string', default: '3000' },
  seconds: { type: 'string' },
  warmup: { type: 'string', default: '500' },
  writers: { type: 'string', default: '4' },
  readers: { type: 'string', default: '4' },
  replicas: { type: 'string', default: '1' },
  dim: { type: 'string', default: '32' },
  out: { type: 'string' },
  /** Also write a heap snapshot of every node at both readings into this folder, for finding what is kept. */
  'heap-snapshots': { type: 'string' },
});
const protocol = values.protocol === 'v1' ? 'v1' : 'dbchain';
const N = Number(values.n);
/** Write for this long instead of N writes (undefined: N writes). */
const SECONDS = values.seconds === undefined ? undefined : Number(values.seconds);
const WARMUP = Number(values.warmup);
const WRITERS = Number(values.writers);
const READERS = Number(values.readers);
const REPLICAS = Number(values.replicas);
const DIM = Number(values.dim);
const OUT = values.out ?? 'benchmarks/soak.json';
const COLLECTION = 'soak';
const WAITS = ['indexed', 'receipt', 'none', 'indexed'] as const;
/** How long the nodes get to index the last writes (bounded: a lost write fails the run). */
const CATCH_UP_MS = 120_000;
const PROBE_TIMEOUT_MS = 120_000;
const PROBE = fileURLToPath(new URL('./soakProbe.mjs', import.meta.url));
const log = (line: string) => process.stderr.write(`${line}\n`);

function rssBytes(pid: number | undefined): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
  if (!kib) throw new Error(`no VmRSS for ${pid}`);
  return Number(kib) * 1024;
}

async function call(url: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = (await response.json()) as Record<string, unknown>;
  if (!response.ok) throw new Error(`${path}: ${response.status} ${JSON.stringify(answer)}`);
  return answer;
}

const vector = (i: number) => Array.from({ length: DIM }, (_, d) => Math.sin(i * 0.7 + d * 1.3));

/**
 * Writes ids from `from` with WRITERS concurrent writers, each taking the next id, until `to` or (when
 * given) `until` (ms since the epoch). A write that is not acknowledged stops the run.
 * @returns the writes acknowledged (ids [from, from + count))
 */
async function write(daemon: ServeProcess, from: number, to: number, until?: number): Promise<number> {
  let next = from;
  let acknowledged = 0;
  await Promise.all(
    Array.from({ length: WRITERS }, async (_, w) => {
      for (let i = next++; i < to && (until === undefined || Date.now() < until); i = next++) {
        await call(daemon.url, `/v1/collections/${COLLECTION}/entities`, {
          entities: [{ id: `e${i}`, vector: vector(i), document: `entity ${i}`, attributes: {} }],
          wait: WAITS[w % WAITS.length],
        });
        acknowledged++;
      }
    }),
  );
  return acknowledged;
}

/** Searches every node until `stop` resolves. */
async function read(nodes: ServeProcess[], stop: Promise<void>): Promise<number> {
  let done = false;
  void stop.then(() => (done = true));
  let searches = 0;
  await Promise.all(
    Array.from({ length: READERS }, async (_, r) => {
      for (let q = 0; !done; q++) {
        const node = nodes[(r + q) % nodes.length] as ServeProcess;
        await call(node.url, `/v1/collections/${COLLECTION}/search`, { vector: vector(q + r * 7919), k: 10 });
        searches++;
      }
    }),
  );
  return searches;
}

/** Waits (bounded) until the node indexed `count` entities of the collection. */
async function caughtUp(node: ServeProcess, count: number): Promise<void> {
  const deadline = Date.now() + CATCH_UP_MS;
  for (;;) {
    const c = (await call(node.url, `/v1/collections/${COLLECTION}`)) as { stats: { live_entities: number } };
    if (c.stats.live_entities === count) return;
    if (Date.now() > deadline) throw new Error(`${node.url} holds ${c.stats.live_entities} of ${count} entities`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** The live heap of a snapshot (sum of self sizes: what survived the full GC a snapshot starts with). */
function liveHeapBytes(file: string): number {
  const snap = JSON.parse(readFileSync(file, 'utf8')) as {
    snapshot: { meta: { node_fields: string[] } };
    nodes: number[];
  };
  const fields = snap.snapshot.meta.node_fields;
  const self = fields.indexOf('self_size');
  let total = 0;
  for (let i = self; i < snap.nodes.length; i += fields.length) total += snap.nodes[i] as number;
  return total;
}

/** A node's memory after forced full collections (soakProbe.mjs), with its live heap when it wrote a snapshot. */
type Probe = { rss: number; heapUsed: number; external: number; arrayBuffers: number; live?: number };

/** Signals every node to collect and write its memory (SIGUSR2), and waits (bounded) for each answer. */
async function probe(nodes: ServeProcess[], dirs: string[], reading: number): Promise<Probe[]> {
  for (const n of nodes) process.kill(n.pid as number, 'SIGUSR2');
  const deadline = Date.now() + PROBE_TIMEOUT_MS;
  const out: Probe[] = [];
  for (const [i, n] of nodes.entries()) {
    const file = join(dirs[i] as string, `${n.pid}-${reading}.json`);
    while (!existsSync(file)) {
      if (Date.now() > deadline) throw new Error(`no memory reading from ${n.url}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const m = JSON.parse(readFileSync(file, 'utf8')) as Probe & { snapshot?: string };
    out.push({ ...m, live: m.snapshot ? liveHeapBytes(m.snapshot) : undefined });
  }
  return out;
}

const MiB = 2 ** 20;

async function main(): Promise<void> {
  const devnet = await spawnDevnet(1, protocol);
  const common = ['--rpc', devnet.url, '--protocol', protocol, '--http', '127.0.0.1:0', '--no-data-dir'];
  const node = ['--embedder', 'none', '--log-level', 'warn'];
  const snapshots = values['heap-snapshots'];
  const probeRoot = mkdtempSync(join(tmpdir(), 'arkivector-soak-'));
  const dirs: string[] = [];
  /** Each node's probe folder (its heap snapshots' too, under --heap-snapshots). */
  const probed = (role: string) => {
    const dir = snapshots ? join(snapshots, role) : join(probeRoot, role);
    mkdirSync(dir, { recursive: true });
    dirs.push(dir);
    return {
      nodeArgs: ['--expose-gc', '--import', PROBE],
      env: { ARKIVECTOR_SOAK_PROBE_DIR: dir, ...(snapshots ? { ARKIVECTOR_SOAK_HEAP_SNAPSHOT: '1' } : {}) },
    };
  };
  const nodes: ServeProcess[] = [];
  try {
    const daemonProbe = probed('daemon');
    const daemon = await spawnServe({
      cwd: process.cwd(),
      args: [...common, ...node],
      nodeArgs: daemonProbe.nodeArgs,
      env: { ...daemonProbe.env, ARKIVECTOR_PRIVATE_KEY: devnet.privateKey },
    });
    nodes.push(daemon);
    for (let r = 0; r < REPLICAS; r++)
      nodes.push(await spawnServe({ cwd: process.cwd(), args: [...common, ...node], ...probed(`replica${r}`) }));
    await call(daemon.url, '/v1/collections', { name: COLLECTION, dim: DIM, metric: 'cosine', wait: 'indexed' });
    log(`bench:soak ${protocol}: warm-up ${WARMUP} writes`);
    await write(daemon, 0, WARMUP);
    for (const n of nodes) await caughtUp(n, WARMUP);
    const before = await probe(nodes, dirs, 1);
    const chainBefore = rssBytes(devnet.pid);
    const load = loadavg()[0] ?? 0;
    log(
      `${SECONDS === undefined ? `${N} writes` : `writing for ${SECONDS} s`} by ${WRITERS} writers, ${READERS} readers, load average ${load.toFixed(2)}`,
    );
    const started = Date.now();
    let finished!: () => void;
    const stop = new Promise<void>((resolve) => (finished = resolve));
    const reading = read(nodes, stop);
    const until = SECONDS === undefined ? undefined : started + SECONDS * 1000;
    const written = await write(
      daemon,
      WARMUP,
      SECONDS === undefined ? WARMUP + N : Number.MAX_SAFE_INTEGER,
      until,
    ).finally(finished);
    const searches = await reading;
    const seconds = (Date.now() - started) / 1000;
    // Every node must hold every acknowledged write (ids are distinct, so the count says it).
    for (const n of nodes) await caughtUp(n, WARMUP + written);
    // Let the writes' background halves (wait none / receipt) settle as they would between bursts.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const after = await probe(nodes, dirs, 2);
    const chainAfter = rssBytes(devnet.pid);
    const per = (a: number, b: number) => Math.round((a - b) / written);
    const perEntity = nodes.map((_, i) => per(after[i]!.rss, before[i]!.rss));
    const replicaMean = perEntity.slice(1).reduce((a, b) => a + b, 0) / Math.max(1, perEntity.length - 1);
    const result = {
      date: new Date().toISOString(),
      command: commandLine(),
      protocol,
      writes: written,
      acknowledged_writes_held: { nodes: nodes.length, entities: WARMUP + written },
      warmup: WARMUP,
      writers: WRITERS,
      readers: READERS,
      replicas: REPLICAS,
      dim: DIM,
      seconds,
      searches,
      load_average: [load, loadavg()[0]],
      nodes: nodes.map((_, i) => {
        const [b, a] = [before[i]!, after[i]!];
        const heap = per(a.heapUsed, b.heapUsed);
        return {
          role: i === 0 ? 'daemon' : 'replica',
          rss_before_mib: b.rss / MiB,
          rss_after_mib: a.rss / MiB,
          bytes_per_entity: perEntity[i],
          heap_before_mib: b.heapUsed / MiB,
          heap_after_mib: a.heapUsed / MiB,
          heap_bytes_per_entity: heap,
          external_bytes_per_entity: per(a.external, b.external),
          rss_over_heap: heap > 0 ? (perEntity[i] as number) / heap : null,
          ...(a.live !== undefined && b.live !== undefined
            ? {
                live_heap_before_mib: b.live / MiB,
                live_heap_after_mib: a.live / MiB,
                live_heap_bytes_per_entity: per(a.live, b.live),
              }
            : {}),
        };
      }),
      // The chain's own memory, for comparison with a daemon that embeds the devnet (`npm start`).
      devnet: {
        rss_before_mib: chainBefore / MiB,
        rss_after_mib: chainAfter / MiB,
        bytes_per_entity: per(chainAfter, chainBefore),
      },
      daemon_over_replica: replicaMean > 0 ? (perEntity[0] as number) / replicaMean : null,
    };
    writeJson(OUT, result);
    log(`${written} writes acknowledged, every one held by all ${nodes.length} nodes (${WARMUP + written} entities)`);
    for (const n of result.nodes) {
      log(
        `${n.role.padEnd(7)} heap ${n.heap_before_mib.toFixed(0)} → ${n.heap_after_mib.toFixed(0)} MiB: ${n.heap_bytes_per_entity} B per written entity (after forced GCs; external ${n.external_bytes_per_entity} B)`,
      );
      if ('live_heap_bytes_per_entity' in n)
        log(`${n.role.padEnd(7)} live heap (snapshot): ${n.live_heap_bytes_per_entity} B per written entity`);
      log(
        `${n.role.padEnd(7)} RSS ${n.rss_before_mib.toFixed(0)} → ${n.rss_after_mib.toFixed(0)} MiB: ${n.bytes_per_entity} B per written entity (${n.rss_over_heap?.toFixed(2) ?? 'n/a'}× the heap's)`,
      );
    }
    log(
      `devnet  RSS ${result.devnet.rss_before_mib.toFixed(0)} → ${result.devnet.rss_after_mib.toFixed(0)} MiB: ${result.devnet.bytes_per_entity} B per written entity (its own process)`,
    );
    log(
      `daemon / replica: ${result.daemon_over_replica?.toFixed(2) ?? 'n/a (no replica grew: GC timing)'} (${seconds.toFixed(0)} s, ${searches} searches) → ${OUT}`,
    );
  } finally {
    await Promise.all(nodes.map((n) => n.stop()));
    await devnet.stop();
    rmSync(probeRoot, { recursive: true, force: true });
  }
}

main().catch((error) => {
  killChildren();
  log(String(error instanceof Error ? (error.stack ?? error.message) : error));
  process.exitCode = 1;
});
