// Shared fixture of the HTTP suites: a devnet with the `notes` collection written through the unmodified
// SDK, a real ChainIndexer over engine stores, the service context, and nodes (app + socket on
// 127.0.0.1:0) built around them with any access policy.
import assert from 'node:assert/strict';
import type { CollectionDefinition } from '../../src/collections/index.ts';
import { createDbChainSource, createHttpTransport, type RpcTransport } from '../../src/chain/index.ts';
import { mountConsole } from '../../src/console/index.ts';
import type { Devnet, DevnetProtocolName } from '../../src/devnet/index.ts';
import type { CollectionStore } from '../../src/engine/index.ts';
import { engineStores } from '../../src/engine/storeFactory.ts';
import {
  createHttpApp,
  docsMount,
  createMetrics,
  loadAccessPolicy,
  serveHttp,
  type AccessPolicy,
  type HttpServer,
  type Metrics,
} from '../../src/http/index.ts';
import type { ServiceContext } from '../../src/service/index.ts';
import { ChainIndexer, type IndexerOptions } from '../../indexer/index.ts';
import { startTestDevnet } from '../helpers/devnet.ts';
import { createEntityAs } from '../helpers/generations.ts';
import { definitionArgs, stateReached, vectorArgs as writeVector } from '../helpers/writes.ts';

export const NOTES: CollectionDefinition = {
  dim: 4,
  metric: 'cosine',
  open: true,
  writers: [],
  index: { m: 16, ef_construction: 64, ef_search: 40 },
  attributes: { topic: 'str', stars: 'i32' },
};

/** What the suites write and then expect back. The last id needs percent-encoding in a URL path. */
export const NOTE_ENTITIES = [
  { id: 'cat', vector: [1, 0, 0, 0], document: 'Cats purr.', attributes: { topic: 'pets', stars: 5 } },
  { id: 'dog', vector: [0.95, 0.08, 0.05, 0], document: 'Dogs bark.', attributes: { topic: 'pets', stars: 4 } },
  { id: 'fern', vector: [0, 0.1, 1, 0.2], document: 'Ferns like shade.', attributes: { topic: 'plants', stars: 3 } },
  { id: 'a/b c?#%é', vector: [0, 0, 0.2, 1], document: 'Odd id.', attributes: { topic: 'misc', stars: 1 } },
];

export const vectorArgs = (collection: string, entity: (typeof NOTE_ENTITIES)[number], def = NOTES) =>
  writeVector(collection, entity, def);

export { definitionArgs, stateReached };

export interface LogLine {
  level: 'info' | 'warn' | 'error';
  fields: Record<string, unknown>;
  message: string;
}

export function captureLogger() {
  const lines: LogLine[] = [];
  const at = (level: LogLine['level']) => (fields: Record<string, unknown>, message: string) =>
    void lines.push({ level, fields, message });
  return { lines, logger: { info: at('info'), warn: at('warn'), error: at('error') } };
}

export interface Node {
  url: string;
  server: HttpServer;
  metrics: Metrics;
  logs: LogLine[];
  ctx: ServiceContext;
}

export type EngineIndexer = ChainIndexer<CollectionStore>;

/** A chain with `notes` written, and an indexer synced to its head. */
export interface Chain {
  devnet: Devnet;
  transport: RpcTransport;
  indexer: EngineIndexer;
  ctx: ServiceContext;
  /** Block of the last write. */
  writtenAt: number;
  /** A node (app on 127.0.0.1:0) over this chain's indexer; closed by `close()`. */
  node(options?: {
    access?: AccessPolicy;
    ctx?: Partial<ServiceContext>;
    compat?: 'kuradb';
    /** The bind address (a loopback one; default 127.0.0.1). */
    host?: string;
  }): Promise<Node>;
  newIndexer(options?: Partial<IndexerOptions<CollectionStore>>): EngineIndexer;
  close(): Promise<void>;
}

/** A devnet of `protocol` (v1 by default) with the notes written unless `write` is false, and a live indexer. */
export async function startChain(options: { write?: boolean; protocol?: DevnetProtocolName } = {}): Promise<Chain> {
  const protocol = options.protocol ?? 'v1';
  const devnet = await startTestDevnet({ protocol });
  const transport = createHttpTransport({ url: devnet.url, attempts: 2, backoffMs: 20 });
  if (options.write !== false) {
    await createEntityAs(devnet, 0, definitionArgs('notes', NOTES));
    for (const entity of NOTE_ENTITIES) await createEntityAs(devnet, 0, vectorArgs('notes', entity), NOTES);
  }
  const writtenAt = devnet.headNumber;
  const indexers: EngineIndexer[] = [];
  const servers: HttpServer[] = [];
  const newIndexer = (extra: Partial<IndexerOptions<CollectionStore>> = {}) => {
    const indexer = new ChainIndexer({
      ...(protocol === 'dbchain' ? { source: createDbChainSource(transport) } : { transport }),
      stores: engineStores,
      chainId: devnet.chainId,
      blockTimeSeconds: 0.2,
      ...extra,
    });
    indexers.push(indexer);
    return indexer;
  };
  const indexer = newIndexer();
  indexer.start();
  assert.ok(
    await indexer.waitForBlock(writtenAt, 30_000),
    `indexer stuck at ${indexer.asOfBlock}: ${indexer.lastError}`,
  );
  await stateReached(indexer, 'live');
  const ctx: ServiceContext = {
    indexer,
    // v1 suites were written against a context without the protocol: keep it so
    chain: { chainId: devnet.chainId, rpc: devnet.url, ...(protocol === 'dbchain' ? { protocol } : {}) },
    minBlockTimeoutMs: 5_000,
  };
  return {
    devnet,
    transport,
    indexer,
    ctx,
    writtenAt,
    newIndexer,
    async node(nodeOptions = {}) {
      const nodeCtx = { ...ctx, ...nodeOptions.ctx };
      const access = nodeOptions.access ?? (await loadAccessPolicy({ publicRead: false, host: '127.0.0.1' }));
      const { lines, logger } = captureLogger();
      const metrics = createMetrics(nodeCtx);
      const mcp = { ctx: nodeCtx, logger, compat: nodeOptions.compat };
      const app = createHttpApp({ ctx: nodeCtx, access, metrics, logger, mcp, mounts: [mountConsole, docsMount()] });
      const server = await serveHttp({ host: nodeOptions.host ?? '127.0.0.1', port: 0, app });
      servers.push(server);
      return { url: server.url, server, metrics, logs: lines, ctx: nodeCtx };
    },
    async close() {
      for (const server of servers) await server.close();
      for (const i of indexers) await i.stop();
      await transport.close();
      await devnet.stop();
    },
  };
}

/** A signer that only says it exists: access and validation are decided before a writer is used. */
export const STUB_WRITER = {
  address: '0x0000000000000000000000000000000000000001',
} as unknown as ServiceContext['writer'];

export const PROBLEM_TYPE = 'application/problem+json';

/** fetch + JSON body, for assertions on status, headers and body together. */
export async function call(url: string, init: RequestInit & { json?: unknown } = {}) {
  const { json, ...rest } = init;
  const headers = new Headers(rest.headers);
  if (json !== undefined) headers.set('content-type', 'application/json');
  const response = await fetch(url, { ...rest, headers, body: json !== undefined ? JSON.stringify(json) : rest.body });
  const text = await response.text();
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: response.status, headers: response.headers, body };
}

/** Asserts a problem answer: status, content type, and the stable code. */
export function assertProblem(answer: Awaited<ReturnType<typeof call>>, status: number, code: string) {
  assert.equal(answer.status, status, `status ${answer.status}: ${JSON.stringify(answer.body)}`);
  assert.equal(answer.headers.get('content-type'), PROBLEM_TYPE);
  assert.equal(answer.body.code, code);
  assert.equal(answer.body.status, status);
  assert.equal(typeof answer.body.title, 'string');
  assert.equal(typeof answer.body.detail, 'string');
  assert.equal(answer.body.stack, undefined);
}
