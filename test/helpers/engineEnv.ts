// The retired hnswlib-node store engine, as tests still meet it: its snapshots (format 3, an hnswlib-node
// graph with the binary16 vectors beside it in `halfvec.bin` and their inverse norms in `invnorms.bin`),
// made here from a native store's snapshot with hnswlib-node itself, and the `ARKIVECTOR_ENGINE` setting
// that used to choose it (now only warned about).
import { createHash } from 'node:crypto';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { after, before } from 'node:test';
import hnswlib from 'hnswlib-node';
import type { CollectionDefinition } from '../../src/collections/index.ts';
import { ENGINE_ENV, metricOps } from '../../src/engine/index.ts';
import { HalfGraph } from '../../src/engine/hnsw/halfGraph.ts';
import { STORE_SNAPSHOT_FORMAT } from '../../src/engine/storeSnapshot.ts';

/**
 * Sets ARKIVECTOR_ENGINE for the enclosing suite (call inside `describe`) and restores it after. Every
 * store runs on the native engine whatever it says: the setting only makes the node warn.
 */
export function useEngine(engine: string): void {
  let was: string | undefined;
  before(() => {
    was = process.env[ENGINE_ENV];
    process.env[ENGINE_ENV] = engine;
  });
  after(() => {
    if (was === undefined) delete process.env[ENGINE_ENV];
    else process.env[ENGINE_ENV] = was;
  });
}

/** One record tuple of `records.json`: slot and label first. */
type Tuple = [slot: number, label: number, ...rest: unknown[]];

/**
 * Rewrites a native store snapshot (`store.save(dir)`) into the one the hnswlib-node engine wrote for the
 * same records: its `hnsw.bin` an hnswlib-node index under the same labels, `halfvec.bin` and
 * `invnorms.bin` beside it, `store.json` at format 3 naming the hnswlib-node engine (or no engine: a
 * snapshot from before engines were recorded).
 * @param dir the store's snapshot folder
 * @param definition the collection's definition (dim, metric, build parameters)
 * @param options `named: false` leaves the engine out of the manifest
 */
export async function toOldEngineStore(
  dir: string,
  definition: CollectionDefinition,
  options: { named?: boolean } = {},
): Promise<void> {
  const manifest = JSON.parse(await readFile(join(dir, 'store.json'), 'utf8')) as Record<string, unknown> & {
    slotCount: number;
    live: number;
  };
  const tuples = JSON.parse(await readFile(join(dir, 'records.json'), 'utf8')) as Tuple[];
  const dim = definition.dim;
  const ops = metricOps(definition.metric);
  const params = { m: definition.index.m, efConstruction: definition.index.ef_construction };
  const graph = await HalfGraph.read(ops, dim, params, join(dir, 'hnsw.bin'));
  const halves = new Uint8Array(manifest.slotCount * dim * 2);
  const norms = new Float32Array(manifest.slotCount);
  const old = new hnswlib.HierarchicalNSW(ops.space, dim);
  const maxLabel = tuples.reduce((max, [, label]) => Math.max(max, label), 0);
  old.initIndex(Math.max(16, maxLabel + 1), params.m, params.efConstruction, 100, true);
  const v = new Float32Array(dim);
  for (const [slot, label] of tuples) {
    const bits = graph.halves(label);
    halves.set(new Uint8Array(bits.buffer, bits.byteOffset, bits.byteLength), slot * dim * 2);
    graph.vector(label, v);
    let squares = 0;
    for (let i = 0; i < dim; i++) squares += v[i]! * v[i]!;
    norms[slot] = squares > 0 ? 1 / Math.sqrt(squares) : 0;
    old.addPoint(Array.from(v), label);
  }
  await rm(join(dir, 'hnsw.bin'));
  await old.writeIndex(join(dir, 'hnsw.bin'));
  await writeFile(join(dir, 'halfvec.bin'), halves);
  await writeFile(join(dir, 'invnorms.bin'), new Uint8Array(norms.buffer));
  const { engine: _native, ...rest } = manifest;
  const written = { ...rest, format: STORE_SNAPSHOT_FORMAT, deleted: 0 };
  await writeFile(
    join(dir, 'store.json'),
    JSON.stringify(options.named === false ? written : { ...written, engine: 'hnswlib-node' }),
  );
}

const sha256 = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex');

/**
 * Rewrites a stopped node's snapshot (`DATA_DIR/snapshot`, written by a native node) into the one an
 * hnswlib-node node left: every store through `toOldEngineStore`, and `meta.json` listing and signing
 * the files as the indexer does.
 * @param dataDir the node's data directory
 * @param definitionOf the definition of each collection the snapshot holds, by name
 */
export async function toOldEngineSnapshot(
  dataDir: string,
  definitionOf: (name: string) => CollectionDefinition,
): Promise<void> {
  const root = join(dataDir, 'snapshot');
  const stores = join(root, 'stores');
  for (const folder of await readdir(stores)) {
    const { name } = JSON.parse(await readFile(join(stores, folder, 'store.json'), 'utf8')) as { name: string };
    await toOldEngineStore(join(stores, folder), definitionOf(name));
  }
  const { checksum: _old, ...meta } = JSON.parse(await readFile(join(root, 'meta.json'), 'utf8')) as {
    checksum: string;
    files: Record<string, string>;
  };
  const files: Record<string, string> = {};
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  const paths = entries
    .filter((e) => e.isFile())
    .map((e) => relative(root, join(e.parentPath, e.name)).split(sep).join('/'))
    .filter((path) => path !== 'meta.json')
    .sort();
  for (const path of paths) files[path] = sha256(await readFile(join(root, path)));
  const unsigned = { ...meta, files };
  await writeFile(
    join(root, 'meta.json'),
    JSON.stringify({ ...unsigned, checksum: sha256(JSON.stringify(unsigned)) }, null, 2),
  );
}
