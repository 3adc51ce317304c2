// Snapshot phase of a collection store: writes the table to a directory (graph via hnswlib's
// writeIndex, records as one JSON array of tuples, the vector slab's binary16 bytes and inverse norms,
// keyword index, manifest last) and restores it. A snapshot of the hnswlib-node engine restored into a
// native store gets its graph built again from its own vectors (snapshotConversion.ts).

import { mkdir, open, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type AttributeValue,
  type CollectionDefinition,
  floatToHalfBits,
  InvalidArgumentError,
} from '../collections/index.ts';
import { defined } from '../defined.ts';
import { readGraph, selectedEngine } from './hnsw/engine.ts';
import { GRAPH_ENGINES, type GraphEngine } from './hnsw/graph.ts';
import { nativeAddon } from './hnsw/nativeAddon.ts';
import { KeywordIndex } from './keyword.ts';
import type { RebuildOptions } from './rebuild.ts';
import { parsedAttributes, type StoredRecord } from './recordView.ts';
import { graphParams, growInt32, type SlotTable } from './slotTable.ts';
import { buildFromHalves } from './snapshotConversion.ts';
import { LITTLE_ENDIAN } from './vectorSlab.ts';

/**
 * 4: a store whose graph keeps its vectors (the native engine) writes no `halfvec.bin` nor `invnorms.bin`:
 * `hnsw.bin` holds each vector's binary16 values once. A format-3 snapshot of such a store still loads (its
 * `halfvec.bin` repeats what `hnsw.bin` holds and is not read); a node that reads format 3 only refuses 4.
 * 3: `records.json` is one array of record tuples (one parse instead of one per line, no field names), and
 * `invnorms.bin` holds the slab's inverse norms (little-endian hosts; recomputed when absent).
 * 2: `halfvec.bin` is the slab itself, slots 0 … slotCount − 1 in slot order (free slots as zeros).
 */
export const STORE_SNAPSHOT_FORMAT = 3;
/** The format a store without a slab writes (its graph keeps the vectors: the native engine). */
export const GRAPH_VECTORS_SNAPSHOT_FORMAT = 4;

export type SnapshotManifest = {
  format: number;
  dim: number;
  metric: string;
  live: number;
  slotCount: number;
  nextLabel: number;
  deleted: number;
  /** The graph engine that wrote `hnsw.bin` (absent: hnswlib-node, before the native engine). */
  engine?: string;
};

/** One record of `records.json`; ±Infinity attributes (f32) are written as strings, which JSON lacks. */
type RecordTuple = [
  slot: number,
  label: number,
  key: string,
  owner: string,
  creator: string | null,
  id: string,
  expiresAt: string,
  document: string,
  attributes: Record<string, AttributeValue | string>,
];

/** A snapshot whose files disagree with its manifest: refused like one of another format (the node rebuilds). */
const damaged = (reason: string) => new InvalidArgumentError(`snapshot is damaged: ${reason}`);

/**
 * Reads a file of exactly `size` bytes into `targets`, one after another (positional reads on the
 * thread pool).
 */
async function readInto(path: string, targets: Uint8Array[], size: number): Promise<undefined> {
  const file = await open(path, 'r');
  try {
    const { size: actual } = await file.stat();
    if (actual !== size) throw damaged(`${actual} bytes of vectors, expected ${size}`);
    let position = 0;
    for (const target of targets) {
      // Each read moves at least one byte or ends the file early, so the loop ends within target.length reads.
      for (let done = 0; done < target.length; ) {
        const { bytesRead } = await file.read(target, done, target.length - done, position + done);
        if (bytesRead === 0) throw damaged('the vector file ended early');
        done += bytesRead;
      }
      position += target.length;
    }
    return undefined;
  } finally {
    await file.close();
  }
}

/**
 * Writes a table to `dir` (created if missing). The caller makes sure no block is staged: the graph
 * file would carry the staged labels as live elements.
 * @param dir target directory
 * @param t the store's table
 * @param name the collection name
 * @param def its definition
 */
export async function writeStoreSnapshot(
  dir: string,
  t: SlotTable,
  name: string,
  def: CollectionDefinition,
): Promise<void> {
  await mkdir(dir, { recursive: true });
  const dim = def.dim;
  await t.graph.write(join(dir, 'hnsw.bin'));
  const tuples: RecordTuple[] = [];
  for (let s = 0; s < t.slotCount; s++) {
    const rec = t.records[s];
    if (rec === undefined) continue;
    // No prototype, so an attribute named `__proto__` is written like any other.
    const attributes: Record<string, AttributeValue | string> = Object.create(null);
    for (const [attr, v] of Object.entries(rec.attributes)) {
      attributes[attr] = typeof v === 'number' && !Number.isFinite(v) ? String(v) : v;
    }
    tuples.push([
      s,
      t.slotLabel[s]!,
      rec.key,
      rec.owner,
      rec.creator ?? null,
      rec.id,
      rec.expiresAt.toString(),
      rec.document,
      attributes,
    ]);
  }
  await writeFile(join(dir, 'records.json'), JSON.stringify(tuples));
  const slab = t.vectors.holdsVectors;
  if (slab && LITTLE_ENDIAN) {
    const norms = t.vectors.invNorms;
    await writeFile(join(dir, 'invnorms.bin'), new Uint8Array(norms.buffer, norms.byteOffset, t.slotCount * 4));
  }
  if (slab) await writeFile(join(dir, 'halfvec.bin'), t.vectors.bytes(t.slotCount));
  await writeFile(join(dir, 'keyword.json'), JSON.stringify(t.keyword.toJSON()));
  const manifest = {
    format: slab ? STORE_SNAPSHOT_FORMAT : GRAPH_VECTORS_SNAPSHOT_FORMAT,
    name,
    dim,
    metric: def.metric,
    live: t.live,
    slotCount: t.slotCount,
    nextLabel: t.nextLabel,
    deleted: t.graph.deleted,
    engine: t.graph.engine,
  };
  await writeFile(join(dir, 'store.json'), JSON.stringify(manifest));
}

/**
 * Reads and checks a snapshot's manifest, before anything is built from it.
 * @param dir the snapshot directory
 * @param definition the collection's current definition (dim and metric must match the snapshot's)
 * @returns the manifest
 * @throws InvalidArgumentError when the snapshot does not fit the definition
 */
export async function readStoreManifest(dir: string, definition: CollectionDefinition): Promise<SnapshotManifest> {
  const manifest = JSON.parse(await readFile(join(dir, 'store.json'), 'utf8')) as SnapshotManifest;
  if (manifest.format !== STORE_SNAPSHOT_FORMAT && manifest.format !== GRAPH_VECTORS_SNAPSHOT_FORMAT)
    throw new InvalidArgumentError(
      `snapshot format ${manifest.format} is not supported (this node reads format ${STORE_SNAPSHOT_FORMAT}, and format ${GRAPH_VECTORS_SNAPSHOT_FORMAT} for a native store)`,
    );
  if (manifest.dim !== definition.dim || manifest.metric !== definition.metric) {
    throw new InvalidArgumentError(
      `snapshot is ${manifest.metric} halfvec(${manifest.dim}), definition is ${definition.metric} halfvec(${definition.dim})`,
    );
  }
  const written = snapshotEngine(manifest);
  // Format 4 has no vectors beside the graph: only a graph that keeps them can have written it.
  if (manifest.format === GRAPH_VECTORS_SNAPSHOT_FORMAT && written !== 'native')
    throw damaged(`format ${GRAPH_VECTORS_SNAPSHOT_FORMAT} written by the ${written} engine`);
  // A native node converts an hnswlib-node snapshot (format 3 keeps the vectors beside the graph); the
  // other way, the vectors are read out of the native graph, which needs the native addon.
  const engine = selectedEngine();
  if (written === 'native' && engine !== 'native' && !nativeAddonBuilt())
    throw new InvalidArgumentError(
      `snapshot graph is of the native engine, this node runs ${engine} and its native addon is not built`,
    );
  return manifest;
}

/** Whether the native addon loads here (a checkout installed with --ignore-scripts has none). */
function nativeAddonBuilt(): boolean {
  try {
    nativeAddon();
    return true;
  } catch {
    return false;
  }
}

/**
 * A native snapshot's vectors as `halfvec.bin` would hold them (slot order, little-endian binary16), read
 * out of its graph under each record's label.
 */
async function halvesOfNativeGraph(
  dir: string,
  t: SlotTable,
  definition: CollectionDefinition,
  tuples: readonly RecordTuple[],
  slotCount: number,
): Promise<Uint8Array> {
  const dim = definition.dim;
  const graph = await readGraph('native', t.ops, dim, graphParams(definition), join(dir, 'hnsw.bin'));
  const read = defined(graph.vector, 'the native graph hands its vectors back').bind(graph);
  const out = new Uint8Array(slotCount * dim * 2);
  const v = new Float32Array(dim);
  for (const [slot, label] of tuples) {
    read(label, v);
    for (let j = 0, o = slot * dim * 2; j < dim; j++, o += 2) {
      const bits = floatToHalfBits(v[j]!);
      out[o] = bits & 0xff;
      out[o + 1] = bits >>> 8;
    }
  }
  return out;
}

/** The engine that wrote a snapshot's graph (absent: hnswlib-node, before the native engine). */
function snapshotEngine(manifest: SnapshotManifest): GraphEngine {
  const written = manifest.engine ?? 'hnswlib-node';
  if (!(GRAPH_ENGINES as readonly string[]).includes(written)) throw damaged(`unknown graph engine ${written}`);
  return written as GraphEngine;
}

/**
 * Fills an empty table from a snapshot whose manifest `readStoreManifest` accepted. A snapshot of another
 * engine than the table's is converted: the graph is built from its vectors (`halfvec.bin`, or read out of
 * a native `hnsw.bin`) in a rebuild worker, with compact labels.
 * @param dir the snapshot directory
 * @param manifest its manifest
 * @param t a fresh table for the collection
 * @param name the collection name
 * @param definition its current definition
 * @param options the store's rebuild options (worker module, temporary folder, logger)
 * @returns whether the graph was converted (the snapshot on disk is then another engine's until written again)
 */
export async function restoreStoreSnapshot(
  dir: string,
  manifest: SnapshotManifest,
  t: SlotTable,
  name: string,
  definition: CollectionDefinition,
  options: RebuildOptions = {},
): Promise<boolean> {
  const started = performance.now();
  const dim = definition.dim;
  const engine = t.graph.engine;
  const from = snapshotEngine(manifest);
  const convert = from !== engine;
  // hnswlib reads its index on libuv's thread pool: the records and the keyword index are parsed on the
  // main thread meanwhile (placing records touches no graph). The catch keeps an early failure handled
  // until it is awaited below.
  const graphRead = convert ? undefined : readGraph(engine, t.ops, dim, graphParams(definition), join(dir, 'hnsw.bin'));
  graphRead?.catch(() => undefined);
  t.slotCount = manifest.slotCount;
  t.nextLabel = convert ? manifest.live : manifest.nextLabel;
  t.ensureCapacity(manifest.slotCount);
  t.labelSlot = growInt32(t.labelSlot, t.nextLabel, -1);
  // The vectors are read on the thread pool straight into the slab (a little-endian host), while the
  // records are parsed here. A store without a slab reads them with its graph (hnsw.bin), or builds its
  // graph from them (a conversion).
  const slab = t.vectors.holdsVectors;
  const halvesPath = join(dir, 'halfvec.bin');
  const targets = slab ? t.vectors.targets(manifest.slotCount) : undefined;
  const halvesRead = !slab
    ? convert
      ? readFile(halvesPath)
      : Promise.resolve(undefined)
    : convert
      ? Promise.resolve(undefined) // read out of the native graph below, once the labels are known
      : targets === undefined
        ? readFile(halvesPath)
        : readInto(halvesPath, targets, manifest.slotCount * dim * 2);
  halvesRead.catch(() => undefined);
  const [text, normsFile, keywordJson] = await Promise.all([
    readFile(join(dir, 'records.json'), 'utf8'),
    slab && LITTLE_ENDIAN ? readFile(join(dir, 'invnorms.bin')).catch(() => undefined) : undefined,
    readFile(join(dir, 'keyword.json'), 'utf8'),
  ]);
  const occupied = new Uint8Array(manifest.slotCount);
  const tuples = JSON.parse(text) as RecordTuple[];
  for (const r of tuples) occupied[r[0]] = 1;
  if (convert && tuples.length !== manifest.live) throw damaged(`${tuples.length} records, expected ${manifest.live}`);
  // A Buffer from readFile may sit at any offset of a shared pool: copy into an aligned array.
  const norms =
    normsFile === undefined
      ? undefined
      : new Float32Array(normsFile.buffer.slice(normsFile.byteOffset, normsFile.byteOffset + normsFile.byteLength));
  if (norms !== undefined && norms.length !== manifest.slotCount)
    throw damaged(`${norms.length} inverse norms, expected ${manifest.slotCount}`);
  const halves =
    convert && from === 'native'
      ? await halvesOfNativeGraph(dir, t, definition, tuples, manifest.slotCount)
      : await halvesRead;
  if (halves !== undefined && halves.length !== manifest.slotCount * dim * 2)
    throw damaged(`${halves.length} bytes of vectors, expected ${manifest.slotCount * dim * 2}`);
  if (!slab) t.ensureCapacity(manifest.slotCount);
  else if (halves === undefined) t.vectors.restoreNorms(manifest.slotCount, occupied, norms);
  else t.vectors.loadBytes(new Uint8Array(halves), manifest.slotCount, occupied, norms);
  // A converted graph labels the i-th record i (records.json is in slot order, as the build below).
  let compact = 0;
  for (const [slot, written, key, owner, creator, id, expiresAt, document, stored] of tuples) {
    const label = convert ? compact++ : written;
    // JSON.parse made own properties (`__proto__` included) and sized the object to them.
    const attributes = parsedAttributes(stored as Record<string, AttributeValue>);
    for (const [k, v] of Object.entries(attributes))
      if (definition.attributes[k] === 'f32' && typeof v === 'string') attributes[k] = Number(v);
    const rec: StoredRecord = {
      key,
      owner,
      creator: creator ?? undefined,
      id,
      expiresAt: BigInt(expiresAt),
      document,
      attributes,
    };
    t.place(slot, rec, label);
  }
  for (let s = 0; s < manifest.slotCount; s++) if (occupied[s] === 0) t.freeSlots.push(s);
  t.keyword = KeywordIndex.fromJSON(keywordJson);
  if (t.keyword.dirty) {
    // Older snapshots discarded documents lazily; rebuild so scores depend on the documents only.
    t.keyword = new KeywordIndex();
    for (let s = 0; s < t.slotCount; s++) {
      const rec = t.records[s];
      if (rec !== undefined) t.keyword.add(s, rec.document);
    }
  }
  if (graphRead !== undefined) {
    t.graph = await graphRead;
    t.graph.deleted = manifest.deleted;
    // A graph never inserted into is written without an index (an empty file, the native engine).
    if (manifest.live > 0 && !t.graph.allocated) throw damaged(`an empty graph for ${manifest.live} records`);
    return false;
  }
  const build = buildFromHalves(
    { engine, metric: definition.metric, dim, m: definition.index.m, efConstruction: definition.index.ef_construction },
    defined(halves, 'halfvec.bin'),
    tuples.map((r) => r[0]),
    options,
  );
  try {
    t.graph = await readGraph(engine, t.ops, dim, graphParams(definition), await build.done);
    if (t.graph.elementCount !== tuples.length)
      throw new Error(`converted graph holds ${t.graph.elementCount} elements, expected ${tuples.length}`);
  } finally {
    await build.dispose();
  }
  options.logger?.info(
    { collection: name, records: tuples.length, ms: Math.round(performance.now() - started) },
    `store converted from its ${from} snapshot to the ${engine} engine (no chain read)`,
  );
  return true;
}
