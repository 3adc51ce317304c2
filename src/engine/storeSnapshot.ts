// Snapshot phase of a collection store: writes the table to a directory (graph via hnswlib's
// writeIndex, records as JSON lines, the vector slab's binary16 bytes, keyword index, manifest last) and
// restores it.

import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type AttributeValue, type CollectionDefinition, InvalidArgumentError } from '../collections/index.ts';
import { HnswGraph } from './hnsw/graph.ts';
import { KeywordIndex } from './keyword.ts';
import { compactAttributes, type StoredRecord } from './recordView.ts';
import { growInt32, type SlotTable } from './slotTable.ts';

/**
 * 2: `halfvec.bin` is the slab itself, slots 0 … slotCount − 1 in slot order (free slots as zeros), loaded
 * in one copy per chunk. 1 packed the live records' halves in record order.
 */
export const STORE_SNAPSHOT_FORMAT = 2;

export type SnapshotManifest = {
  format: number;
  dim: number;
  metric: string;
  live: number;
  slotCount: number;
  nextLabel: number;
  deleted: number;
};

type RecordLine = {
  slot: number;
  label: number;
  key: string;
  owner: string;
  creator: string | null;
  id: string;
  expiresAt: string;
  document: string;
  attributes: Record<string, AttributeValue>;
};

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
  const lines: string[] = [];
  for (let s = 0; s < t.slotCount; s++) {
    const rec = t.records[s];
    if (rec === undefined) continue;
    // No prototype, so an attribute named `__proto__` is written like any other.
    const attributes: Record<string, AttributeValue | string> = Object.create(null);
    for (const [attr, v] of Object.entries(rec.attributes)) {
      // JSON has no ±Infinity, which f32 attributes may hold.
      attributes[attr] = typeof v === 'number' && !Number.isFinite(v) ? String(v) : v;
    }
    lines.push(
      JSON.stringify({
        slot: s,
        label: t.slotLabel[s],
        key: rec.key,
        owner: rec.owner,
        creator: rec.creator ?? null,
        id: rec.id,
        expiresAt: rec.expiresAt.toString(),
        document: rec.document,
        attributes,
      }),
    );
  }
  await writeFile(join(dir, 'records.jsonl'), lines.join('\n'));
  await writeFile(join(dir, 'halfvec.bin'), t.vectors.bytes(t.slotCount));
  await writeFile(join(dir, 'keyword.json'), JSON.stringify(t.keyword.toJSON()));
  const manifest = {
    format: STORE_SNAPSHOT_FORMAT,
    name,
    dim,
    metric: def.metric,
    live: t.live,
    slotCount: t.slotCount,
    nextLabel: t.nextLabel,
    deleted: t.graph.deleted,
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
  if (manifest.format !== STORE_SNAPSHOT_FORMAT)
    throw new InvalidArgumentError(
      `snapshot format ${manifest.format} is not supported (this node reads format ${STORE_SNAPSHOT_FORMAT})`,
    );
  if (manifest.dim !== definition.dim || manifest.metric !== definition.metric) {
    throw new InvalidArgumentError(
      `snapshot is ${manifest.metric} halfvec(${manifest.dim}), definition is ${definition.metric} halfvec(${definition.dim})`,
    );
  }
  return manifest;
}

/**
 * Fills an empty table from a snapshot whose manifest `readStoreManifest` accepted.
 * @param dir the snapshot directory
 * @param manifest its manifest
 * @param t a fresh table for the collection
 * @param name the collection name
 * @param definition its current definition
 */
export async function restoreStoreSnapshot(
  dir: string,
  manifest: SnapshotManifest,
  t: SlotTable,
  name: string,
  definition: CollectionDefinition,
): Promise<void> {
  const dim = definition.dim;
  // hnswlib reads its index on libuv's thread pool: the records and the keyword index are parsed on the
  // main thread meanwhile (placing records touches no graph). The catch keeps an early failure handled
  // until it is awaited below.
  const graphRead = HnswGraph.read(
    t.ops,
    dim,
    { m: definition.index.m, efConstruction: definition.index.ef_construction },
    join(dir, 'hnsw.bin'),
  );
  graphRead.catch(() => undefined);
  const [text, halvesFile, keywordJson] = await Promise.all([
    readFile(join(dir, 'records.jsonl'), 'utf8'),
    readFile(join(dir, 'halfvec.bin')),
    readFile(join(dir, 'keyword.json'), 'utf8'),
  ]);
  const halves = new Uint8Array(halvesFile);
  t.slotCount = manifest.slotCount;
  t.nextLabel = manifest.nextLabel;
  t.ensureCapacity(manifest.slotCount);
  t.labelSlot = growInt32(t.labelSlot, manifest.nextLabel, -1);
  const occupied = new Uint8Array(manifest.slotCount);
  const lines = (text.length === 0 ? [] : text.split('\n')).map((line) => JSON.parse(line) as RecordLine);
  for (const r of lines) occupied[r.slot] = 1;
  t.vectors.loadBytes(halves, manifest.slotCount, occupied);
  for (const r of lines) {
    // JSON.parse made own properties (`__proto__` included); compactAttributes drops the prototype.
    const attributes = compactAttributes(r.attributes);
    for (const [k, v] of Object.entries(attributes))
      if (definition.attributes[k] === 'f32' && typeof v === 'string') attributes[k] = Number(v);
    const rec: StoredRecord = {
      key: r.key,
      owner: r.owner,
      creator: r.creator ?? undefined,
      collection: name,
      id: r.id,
      expiresAt: BigInt(r.expiresAt),
      dim,
      document: r.document,
      attributes,
    };
    t.place(r.slot, rec, r.label);
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
  t.graph = await graphRead;
  t.graph.deleted = manifest.deleted;
}
