// Memory of a following node: RSS per live entity of a read-only node and of a write
// daemon, each the real gateway (`startGateway`) in a process of its own, following the devnet while
// N small entities (dim 32, ~10-byte documents, two attributes) are written through the daemon's REST
// API. RSS per entity = (RSS once synced at N − RSS synced at 0) / N, both after a forced GC.
// The parent (this module's `runMemoryBench`) runs the devnet and the writes; the children run
// `nodeRole` (the indexer suite with --role node), answering `measure` messages over IPC.
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { writeHeapSnapshot } from 'node:v8';
import { startDevnet } from '../../src/devnet/index.ts';
import { childArgs } from './args.ts';
import { parseServeConfig } from '../../src/config.ts';
import { createLogger, startGateway } from '../../src/node/index.ts';

/** What a node child reports after a forced GC. */
export type NodeMemory = { rss: number; heapUsed: number; external: number; arrayBuffers: number; live: number };

type Measure = { type: 'measure'; block: number; heapSnapshot?: string };

/** How long a child may take to reach a block (the devnet is local; 30k entities take seconds). */
const SYNC_TIMEOUT_MS = 600_000;

function gc(): void {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (!collect) throw new Error('run the node role with --expose-gc');
  collect();
  collect();
}

/**
 * The child: a gateway following `rpc` (with a signer when ARKIVECTOR_PRIVATE_KEY is set), answering
 * `measure` with its memory once it has applied the block.
 * @param rpc the devnet's URL
 */
export async function nodeRole(rpc: string): Promise<void> {
  const config = parseServeConfig(['--rpc', rpc, '--http', '127.0.0.1:0', '--log-level', 'warn']);
  const gateway = await startGateway(config, createLogger('warn'));
  const send = (message: unknown) => process.send?.(message);
  process.on('message', (raw: Measure | { type: 'stop' }) => {
    void (async () => {
      if (raw.type === 'stop') {
        await gateway.close();
        process.disconnect();
        return;
      }
      if (!(await gateway.indexer.waitForBlock(raw.block, SYNC_TIMEOUT_MS)))
        throw new Error(`node did not reach block ${raw.block}`);
      gc();
      const m = process.memoryUsage();
      if (raw.heapSnapshot) writeHeapSnapshot(raw.heapSnapshot);
      const live = gateway.indexer.collections.get('bench')?.stats.live_entities ?? 0;
      send({ rss: m.rss, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers, live });
    })().catch((error: unknown) => {
      process.stderr.write(`node role: ${(error as Error).stack}\n`);
      process.exit(1);
    });
  });
  send({ ready: gateway.httpUrl });
}

type Child = { url: string; measure(block: number, heapSnapshot?: string): Promise<NodeMemory>; stop(): Promise<void> };

async function spawnNode(script: string, rpc: string, privateKey?: string): Promise<Child> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.ARKIVECTOR_PRIVATE_KEY;
  if (privateKey) env.ARKIVECTOR_PRIVATE_KEY = privateKey;
  const child = fork(script, childArgs(['--role', 'node', '--rpc', rpc]), {
    execArgv: ['--expose-gc', '--import', 'tsx'],
    env,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const next = async <T>(): Promise<T> => {
    const [message] = (await Promise.race([once(child, 'message'), once(child, 'exit')])) as [T];
    if (message === null || typeof message !== 'object') throw new Error(`node child exited (${String(message)})`);
    return message;
  };
  const { ready } = await next<{ ready: string }>();
  return {
    url: ready,
    async measure(block, heapSnapshot) {
      child.send({ type: 'measure', block, heapSnapshot } satisfies Measure);
      return next<NodeMemory>();
    },
    async stop() {
      child.send({ type: 'stop' });
      await once(child, 'exit');
    },
  };
}

async function post(url: string, body: unknown): Promise<{ block_number: number }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { block_number: number };
  if (!res.ok) throw new Error(`${url}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

export type MemoryResult = {
  entities: number;
  dim: number;
  document_bytes: number;
  read_only: { bytes_per_entity: number; heap_bytes_per_entity: number; external_bytes_per_entity: number };
  write_daemon: { bytes_per_entity: number; heap_bytes_per_entity: number; external_bytes_per_entity: number };
};

/**
 * Writes `total` entities through a write daemon while a read-only node follows; measures both.
 * @param script this bench's entry (forked for the node children)
 * @param total entities to write
 * @param dim their dimension
 * @param heapDir where to write the children's heap snapshots (none when undefined)
 */
export async function runMemoryBench(
  script: string,
  total: number,
  dim: number,
  heapDir?: string,
): Promise<MemoryResult> {
  const devnet = await startDevnet({ port: 0, blockTime: 0 });
  const children: Child[] = [];
  try {
    const [, daemonAccount] = devnet.accounts;
    if (!daemonAccount) throw new Error('the devnet has no second funded account');
    const daemon = await spawnNode(script, devnet.url, daemonAccount.privateKey);
    children.push(daemon);
    const follower = await spawnNode(script, devnet.url);
    children.push(follower);
    const created = await post(`${daemon.url}/v1/collections`, {
      name: 'bench',
      dim,
      metric: 'cosine',
      attributes: { topic: 'str', rank: 'i32' },
    });
    const before = {
      daemon: await daemon.measure(created.block_number),
      follower: await follower.measure(created.block_number),
    };
    let random = 1;
    const next = () => {
      random = (random * 16807) % 2147483647;
      return random / 2147483647 - 0.5;
    };
    let documentBytes = 0;
    let block = created.block_number;
    for (let written = 0; written < total; written += 100) {
      const entities = Array.from({ length: Math.min(100, total - written) }, (_, i) => {
        const n = written + i;
        const document = `doc ${String(n).padStart(6, '0')}`;
        documentBytes += document.length;
        return {
          id: `v${n}`,
          vector: Array.from({ length: dim }, next),
          document,
          attributes: { topic: `t${n % 7}`, rank: n },
        };
      });
      block = (await post(`${daemon.url}/v1/collections/bench/entities`, { entities })).block_number;
      if (process.stderr.isTTY) process.stderr.write(`\rwriting: ${written + entities.length} / ${total}`);
    }
    process.stderr.write('\n');
    const after = {
      daemon: await daemon.measure(block, heapDir && `${heapDir}/daemon.heapsnapshot`),
      follower: await follower.measure(block, heapDir && `${heapDir}/follower.heapsnapshot`),
    };
    for (const [role, m] of Object.entries(after))
      if (m.live !== total) throw new Error(`${role}: ${m.live} entities live, expected ${total}`);
    const per = (a: NodeMemory, b: NodeMemory) => ({
      bytes_per_entity: Math.round((a.rss - b.rss) / total),
      heap_bytes_per_entity: Math.round((a.heapUsed - b.heapUsed) / total),
      external_bytes_per_entity: Math.round((a.external - b.external) / total),
    });
    return {
      entities: total,
      dim,
      document_bytes: Math.round(documentBytes / total),
      read_only: per(after.follower, before.follower),
      write_daemon: per(after.daemon, before.daemon),
    };
  } finally {
    for (const child of children) await child.stop().catch(() => undefined);
    await devnet.stop();
  }
}
