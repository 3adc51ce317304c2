// Snapshot phase of a collection store: writes the table to a directory (the graph, which holds the
// vectors, via hnswlib's saveIndex; records as one JSON array of tuples; keyword index; manifest last) and
// restores it. A snapshot the retired hnswlib-node engine wrote gets its graph built again from its own
// binary16 vectors (snapshotConversion.ts): a snapshot is a cache of the chain, never a reason to stop.

import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type AttributeValue, type CollectionDefinition, InvalidArgumentError } from '../collections/index.ts';
import { defined } from '../defined.ts';
import { HalfGraph } from './hnsw/halfGraph.ts';
import { KeywordIndex } from './keyword.ts';
import type { RebuildOptions } from './rebuild.ts';
import { parsedAttributes, type StoredRecord } from './recordView.ts';
import { graphParams, growInt32, type SlotTable } from './slotTable.ts';
import { buildFromHalves } from './snapshotConversion.ts';

/**
 * The oldest format read. 3: `records.json` is one array of record tuples, `halfvec.bin` the vectors as
 * binary16 in slot order (free slots as zeros) beside the graph, `invnorms.bin` their inverse norms. The
 * hnswlib-node engine wrote it (its graph is rebuilt from `halfvec.bin` on load); so did the native engine
 * before format 4 (its graph loads as it is, `halfvec.bin` is not read).
 */
export const STORE_SNAPSHOT_FORMAT = 3;
/** The format written: `hnsw.bin` holds each vector's binary16 values once, beside no other copy. */
export const GRAPH_VECTORS_SNAPSHOT_FORMAT = 4;

/** The engines that ever wrote a snapshot's graph. */
const SNAPSHOT_ENGINES = ['hnswlib-node', 'native'] as const;
type SnapshotEngine = (typeof SNAPSHOT_ENGINES)[number];

export type SnapshotManifest = {
  format: number;
  dim: number;
  metric: string;
  live: number;
  slotCount: number;
  nextLabel: number;
  deleted: number;
  /** The graph engine that wrote `hnsw.bin` (absent: hnswlib-node, before the native engine existed). */
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
  await writeFile(join(dir, 'keyword.json'), JSON.stringify(t.keyword.toJSON()));
  const manifest = {
    format: GRAPH_VECTORS_SNAPSHOT_FORMAT,
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
      `snapshot format ${manifest.format} is not supported (this node reads format ${STORE_SNAPSHOT_FORMAT} or ${GRAPH_VECTORS_SNAPSHOT_FORMAT})`,
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
  return manifest;
}

/** The engine that wrote a snapshot's graph (absent: hnswlib-node, before the native engine existed). */
function snapshotEngine(manifest: SnapshotManifest): SnapshotEngine {
  const written = manifest.engine ?? 'hnswlib-node';
  if (!(SNAPSHOT_ENGINES as readonly string[]).includes(written)) throw damaged(`unknown graph engine ${written}`);
  return written as SnapshotEngine;
}

/**
 * Fills an empty table from a snapshot whose manifest `readStoreManifest` accepted. A snapshot of the
 * retired hnswlib-node engine is converted: the graph is built from its vectors (`halfvec.bin`) in a
 * rebuild worker, with compact labels.
 * @param dir the snapshot directory
 * @param manifest its manifest
 * @param t a fresh table for the collection
 * @param name the collection name
 * @param definition its current definition
 * @param options the store's rebuild options (worker module, temporary folder, logger)
 * @returns whether the graph was converted (the snapshot on disk is then the old engine's until written again)
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
  const from = snapshotEngine(manifest);
  const convert = from !== 'native';
  // hnswlib reads its index on libuv's thread pool, and a converted snapshot's vectors are read there too:
  // the records and the keyword index are parsed on the main thread meanwhile (placing records touches no
  // graph). The catches keep an early failure handled until it is awaited below.
  const graphRead = convert ? undefined : HalfGraph.read(t.ops, dim, graphParams(definition), join(dir, 'hnsw.bin'));
  graphRead?.catch(() => undefined);
  const halvesRead = convert ? readFile(join(dir, 'halfvec.bin')) : undefined;
  halvesRead?.catch(() => undefined);
  t.slotCount = manifest.slotCount;
  t.nextLabel = convert ? manifest.live : manifest.nextLabel;
  t.ensureCapacity(manifest.slotCount);
  t.labelSlot = growInt32(t.labelSlot, t.nextLabel, -1);
  const [text, keywordJson] = await Promise.all([
    readFile(join(dir, 'records.json'), 'utf8'),
    readFile(join(dir, 'keyword.json'), 'utf8'),
  ]);
  const occupied = new Uint8Array(manifest.slotCount);
  const tuples = JSON.parse(text) as RecordTuple[];
  for (const r of tuples) occupied[r[0]] = 1;
  if (convert && tuples.length !== manifest.live) throw damaged(`${tuples.length} records, expected ${manifest.live}`);
  const halves = await halvesRead;
  if (halves !== undefined && halves.length !== manifest.slotCount * dim * 2)
    throw damaged(`${halves.length} bytes of vectors, expected ${manifest.slotCount * dim * 2}`);
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
    // A graph never inserted into is written without an index (an empty file).
    if (manifest.live > 0 && !t.graph.allocated) throw damaged(`an empty graph for ${manifest.live} records`);
    return false;
  }
  const build = buildFromHalves(
    { metric: definition.metric, dim, m: definition.index.m, efConstruction: definition.index.ef_construction },
    defined(halves, 'halfvec.bin'),
    tuples.map((r) => r[0]),
    options,
  );
  try {
    t.graph = await HalfGraph.read(t.ops, dim, graphParams(definition), await build.done);
    if (t.graph.elementCount !== tuples.length)
      throw new Error(`converted graph holds ${t.graph.elementCount} elements, expected ${tuples.length}`);
  } finally {
    await build.dispose();
  }
  options.logger?.info(
    { collection: name, records: tuples.length, ms: Math.round(performance.now() - started) },
    `store converted from its ${from} snapshot to the native engine (no chain read)`,
  );
  return true;
}
