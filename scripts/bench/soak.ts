// `npm run bench:soak`: the memory a write daemon keeps per written entity, against a replica's. One
// devnet (its own process, so the chain's state is never counted), one `serve` with a signer (the
// daemon), `--replicas` without one, `--writers` REST writers (single-entity upserts, wait modes
// alternating indexed / receipt / none) and `--readers` searching both. RSS (from /proc) of every node is
// read after a warm-up and after the writes, once every node indexed them all; the difference divided by
// the entities written is the bytes each node keeps per entity.
//
// Usage: npm run bench:soak -- [--protocol dbchain|v1] [--n N] [--warmup N] [--writers W] [--readers R]
//   [--replicas K] [--dim D] [--out FILE] [--heap-snapshots DIR]
// --heap-snapshots: a heap snapshot of every node after the warm-up and at the end (SIGUSR2), whose live
// heap (what survives a full GC) per written entity is the number RSS only approximates.
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { spawnDevnet } from './devnetProcess.ts';
import { killChildren, type ServeProcess, spawnServe } from '../../test/helpers/serveProcess.ts';
import { benchArgs, commandLine } from './args.ts';
import { writeJson } from './output.ts';

const values = benchArgs({
  protocol: { type: 'string', default: 'dbchain' },
  n: { type: 'string', default: '3000' },
  warmup: { type: 'string', default: '500' },
  writers: { type: 'string', default: '4' },
  readers: { type: 'string', default: '4' },
  replicas: { type: 'string', default: '1' },
  dim: { type: 'string', default: '32' },
  out: { type: 'string' },
  /** Also write a heap snapshot of every node at the end (SIGUSR2) into this folder, for finding what is kept. */
  'heap-snapshots': { type: 'string' },
});
const protocol = values.protocol === 'v1' ? 'v1' : 'dbchain';
const N = Number(values.n);
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
const SNAPSHOT_TIMEOUT_MS = 120_000;
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

/** Writes ids [from, to) with WRITERS concurrent writers, each taking the next id. */
async function write(daemon: ServeProcess, from: number, to: number): Promise<void> {
  let next = from;
  await Promise.all(
    Array.from({ length: WRITERS }, async (_, w) => {
      for (let i = next++; i < to; i = next++) {
        await call(daemon.url, `/v1/collections/${COLLECTION}/entities`, {
          entities: [{ id: `e${i}`, vector: vector(i), document: `entity ${i}`, attributes: {} }],
          wait: WAITS[w % WAITS.length],
        });
      }
    }),
  );
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

/**
 * Signals every node to write a heap snapshot (SIGUSR2) into its folder and waits (bounded) for each.
 * @returns each node's live heap in bytes
 */
async function heapSnapshots(nodes: ServeProcess[], dir: string): Promise<number[]> {
  const folders = nodes.map((_, i) => `${dir}/${i === 0 ? 'daemon' : `replica${i - 1}`}`);
  const before = folders.map((f) => readdirSync(f).length);
  for (const n of nodes) process.kill(n.pid as number, 'SIGUSR2');
  const deadline = Date.now() + SNAPSHOT_TIMEOUT_MS;
  const live: number[] = [];
  for (const [i, folder] of folders.entries()) {
    // A node writes its snapshot synchronously: once it answers again, the file is complete.
    while (readdirSync(folder).length === before[i]) {
      if (Date.now() > deadline) throw new Error(`no heap snapshot in ${folder}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await call(nodes[i]?.url as string, '/healthz');
    const newest = readdirSync(folder).sort().at(-1) as string;
    live.push(liveHeapBytes(`${folder}/${newest}`));
  }
  return live;
}

async function main(): Promise<void> {
  const devnet = await spawnDevnet(1, protocol);
  const common = ['--rpc', devnet.url, '--protocol', protocol, '--http', '127.0.0.1:0', '--no-data-dir'];
  const node = ['--embedder', 'none', '--log-level', 'warn'];
  const snapshots = values['heap-snapshots'];
  const nodeArgs = (role: string) => {
    if (!snapshots) return [];
    mkdirSync(`${snapshots}/${role}`, { recursive: true });
    return ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${snapshots}/${role}`];
  };
  const nodes: ServeProcess[] = [];
  try {
    const daemon = await spawnServe({
      cwd: process.cwd(),
      args: [...common, ...node],
      nodeArgs: nodeArgs('daemon'),
      env: { ARKIVECTOR_PRIVATE_KEY: devnet.privateKey },
    });
    nodes.push(daemon);
    for (let r = 0; r < REPLICAS; r++)
      nodes.push(
        await spawnServe({ cwd: process.cwd(), args: [...common, ...node], nodeArgs: nodeArgs(`replica${r}`) }),
      );
    await call(daemon.url, '/v1/collections', { name: COLLECTION, dim: DIM, metric: 'cosine', wait: 'indexed' });
    log(`bench:soak ${protocol}: warm-up ${WARMUP} writes`);
    await write(daemon, 0, WARMUP);
    for (const n of nodes) await caughtUp(n, WARMUP);
    const before = nodes.map((n) => rssBytes(n.pid));
    const chainBefore = rssBytes(devnet.pid);
    const heapBefore = snapshots ? await heapSnapshots(nodes, snapshots) : undefined;
    const load = loadavg()[0] ?? 0;
    log(`${N} writes by ${WRITERS} writers, ${READERS} readers, load average ${load.toFixed(2)}`);
    const started = Date.now();
    let finished!: () => void;
    const stop = new Promise<void>((resolve) => (finished = resolve));
    const reading = read(nodes, stop);
    await write(daemon, WARMUP, WARMUP + N).finally(finished);
    const searches = await reading;
    const seconds = (Date.now() - started) / 1000;
    for (const n of nodes) await caughtUp(n, WARMUP + N);
    // Let the writes' background halves (wait none / receipt) settle as they would between bursts.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const after = nodes.map((n) => rssBytes(n.pid));
    const chainAfter = rssBytes(devnet.pid);
    const heapAfter = snapshots ? await heapSnapshots(nodes, snapshots) : undefined;
    const perEntity = nodes.map((_, i) => Math.round(((after[i] as number) - (before[i] as number)) / N));
    const replicaMean = perEntity.slice(1).reduce((a, b) => a + b, 0) / Math.max(1, perEntity.length - 1);
    const result = {
      date: new Date().toISOString(),
      command: commandLine(),
      protocol,
      writes: N,
      warmup: WARMUP,
      writers: WRITERS,
      readers: READERS,
      replicas: REPLICAS,
      dim: DIM,
      seconds,
      searches,
      load_average: [load, loadavg()[0]],
      nodes: nodes.map((_, i) => ({
        role: i === 0 ? 'daemon' : 'replica',
        rss_before_mib: (before[i] as number) / 2 ** 20,
        rss_after_mib: (after[i] as number) / 2 ** 20,
        bytes_per_entity: perEntity[i],
        ...(heapBefore && heapAfter
          ? {
              live_heap_before_mib: (heapBefore[i] as number) / 2 ** 20,
              live_heap_after_mib: (heapAfter[i] as number) / 2 ** 20,
              live_heap_bytes_per_entity: Math.round(((heapAfter[i] as number) - (heapBefore[i] as number)) / N),
            }
          : {}),
      })),
      // The chain's own memory, for comparison with a daemon that embeds the devnet (`npm start`).
      devnet: {
        rss_before_mib: chainBefore / 2 ** 20,
        rss_after_mib: chainAfter / 2 ** 20,
        bytes_per_entity: Math.round((chainAfter - chainBefore) / N),
      },
      daemon_over_replica: replicaMean > 0 ? (perEntity[0] as number) / replicaMean : null,
    };
    writeJson(OUT, result);
    for (const n of result.nodes) {
      if ('live_heap_bytes_per_entity' in n)
        log(`${n.role.padEnd(7)} live heap: ${n.live_heap_bytes_per_entity} B per written entity`);
      log(
        `${n.role.padEnd(7)} RSS ${n.rss_before_mib.toFixed(0)} → ${n.rss_after_mib.toFixed(0)} MiB: ${n.bytes_per_entity} B per written entity`,
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
  }
}

main().catch((error) => {
  killChildren();
  log(String(error instanceof Error ? (error.stack ?? error.message) : error));
  process.exitCode = 1;
});
