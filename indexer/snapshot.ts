// Snapshots for --data-dir: the tracked entities and every collection store, written with the block
// number and hash they reflect. A snapshot is loaded on start only if that block is still canonical and
// every file is the one written (sha256 of each file in the manifest, and of the manifest itself).
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { Address, Hex } from 'viem';
import type { IndexedStore } from '../src/engine/index.ts';
import { restoredEntity, type EntityContent, type TrackedEntity } from './trackedEntities.ts';

/**
 * 3: `meta.json` lists the sha256 of every other file (`files`) and its own (`checksum`, over the meta
 * without it); a file missing, added or differing refuses the snapshot.
 * 2: vector entities without payloads or attributes (the stores hold their records), with the resolver's
 * verdicts, so a restart decodes nothing. A snapshot of another format is not loaded (the node rebuilds).
 */
export const SNAPSHOT_FORMAT = 3;
const CURRENT = 'snapshot';
const STAGING = /^snapshot\.tmp-(\d+)$/;

/** A snapshot that cannot be what was written (damaged, incomplete, edited): the node rebuilds from the chain. */
export class SnapshotRefusedError extends Error {
  override name = 'SnapshotRefusedError';
}

export interface SnapshotMeta {
  format: number;
  chainId: number;
  block: number;
  hash: Hex;
  collections: string[];
  writtenAt: string;
  /** Path (relative, `/`-separated) → sha256 (hex) of every file of the snapshot but meta.json. */
  files: Record<string, string>;
  /** sha256 of this meta's JSON without `checksum`. */
  checksum: string;
}

/** The definition entity a collection's verdicts were decoded under. */
export interface DecodedUnder {
  key: Hex;
  lastModifiedAtBlock: number;
}

interface SerializedContent {
  contentType: string;
  payload: string;
  strings: [string, string][];
  numbers: [string, string][];
}

interface SerializedEntity {
  key: Hex;
  kind: TrackedEntity['kind'];
  collection: string;
  id: string;
  owner: Address;
  creator?: Address;
  expiresAt: string;
  lastModifiedAtBlock: number;
  sequence: string;
  oversize?: number;
  /** Definitions only. */
  content?: SerializedContent;
  /** Vectors: null when valid under the collection's definition, else the reason; absent when not decoded. */
  verdict?: string | null;
}

interface SerializedEntities {
  decodedUnder: Record<string, DecodedUnder>;
  entities: SerializedEntity[];
}

/** What a snapshot keeps of an entity's verdict: undefined (none), null (valid) or the reason. */
export type VerdictOf = (entity: TrackedEntity) => string | null | undefined;

const serializeContent = (c: EntityContent): SerializedContent => ({
  contentType: c.contentType,
  payload: Buffer.from(c.payload).toString('base64'),
  strings: [...c.stringAttributes],
  numbers: [...c.numericAttributes].map(([k, v]) => [k, v.toString()]),
});

const serialize = (e: TrackedEntity, verdictOf: VerdictOf): SerializedEntity => {
  const verdict = e.kind === 'vector' ? verdictOf(e) : undefined;
  return {
    key: e.key,
    kind: e.kind,
    collection: e.collection,
    id: e.id,
    owner: e.owner,
    creator: e.creator,
    expiresAt: e.expiresAt.toString(),
    lastModifiedAtBlock: e.lastModifiedAtBlock,
    sequence: e.sequence.toString(),
    ...(e.oversize !== undefined ? { oversize: e.oversize } : {}),
    ...(e.kind === 'collection' && e.content ? { content: serializeContent(e.content) } : {}),
    ...(verdict !== undefined ? { verdict } : {}),
  };
};

const deserializeContent = (c: SerializedContent): EntityContent => ({
  contentType: c.contentType,
  payload: new Uint8Array(Buffer.from(c.payload, 'base64')),
  stringAttributes: new Map(c.strings),
  numericAttributes: new Map(c.numbers.map(([k, v]) => [k, BigInt(v)])),
});

const deserialize = (s: SerializedEntity): TrackedEntity =>
  restoredEntity({
    key: s.key,
    kind: s.kind,
    collection: s.collection,
    id: s.id,
    owner: s.owner,
    creator: s.creator,
    expiresAt: BigInt(s.expiresAt),
    lastModifiedAtBlock: s.lastModifiedAtBlock,
    sequence: BigInt(s.sequence),
    oversize: s.oversize,
    content: s.content && deserializeContent(s.content),
  });

const storeDir = (dir: string, index: number) => join(dir, 'stores', String(index));

/** Writes a complete snapshot next to the current one, then swaps it in (a crash leaves the old one). */
export async function writeSnapshot(
  dataDir: string,
  meta: Omit<SnapshotMeta, 'format' | 'collections' | 'writtenAt' | 'files' | 'checksum'>,
  entities: Iterable<TrackedEntity>,
  stores: ReadonlyMap<string, IndexedStore>,
  verdicts: { decodedUnder: Record<string, DecodedUnder>; verdictOf: VerdictOf },
): Promise<void> {
  const staging = join(dataDir, `${CURRENT}.tmp-${process.pid}`);
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true });
  const names = [...stores.keys()];
  let index = 0;
  for (const store of stores.values()) {
    const dir = storeDir(staging, index++);
    await mkdir(dir, { recursive: true });
    await store.save(dir);
  }
  const serialized: SerializedEntities = {
    decodedUnder: verdicts.decodedUnder,
    entities: [...entities].map((e) => serialize(e, verdicts.verdictOf)),
  };
  await writeFile(join(staging, 'entities.json'), JSON.stringify(serialized));
  const files: Record<string, string> = {};
  for (const path of await filesUnder(staging)) files[path] = await sha256File(join(staging, path));
  const unsigned: Omit<SnapshotMeta, 'checksum'> = {
    format: SNAPSHOT_FORMAT,
    ...meta,
    collections: names,
    writtenAt: new Date().toISOString(),
    files,
  };
  const full: SnapshotMeta = { ...unsigned, checksum: sha256(JSON.stringify(unsigned)) };
  await writeFile(join(staging, 'meta.json'), JSON.stringify(full, null, 2));
  const current = join(dataDir, CURRENT);
  const old = join(dataDir, `${CURRENT}.old`);
  await rm(old, { recursive: true, force: true });
  await rename(current, old).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
  });
  await rename(staging, current);
  await rm(old, { recursive: true, force: true });
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Streams the file through sha256 (a large vector file is never held whole). */
async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Every file below `root`, as relative `/`-separated paths, sorted. */
async function filesUnder(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(root, join(e.parentPath, e.name)).split(sep).join('/'))
    .sort();
}

/**
 * The current snapshot's meta: undefined when there is none or it is of another format (the node
 * rebuilds, as for an older version's).
 * @throws SnapshotRefusedError when meta.json is unreadable or not the one written
 */
export async function readSnapshotMeta(dataDir: string): Promise<SnapshotMeta | undefined> {
  let text: string;
  try {
    text = await readFile(join(dataDir, CURRENT, 'meta.json'), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new SnapshotRefusedError(`meta.json cannot be read (${(error as Error).message})`);
  }
  let meta: SnapshotMeta;
  try {
    meta = JSON.parse(text) as SnapshotMeta;
  } catch {
    throw new SnapshotRefusedError('meta.json is not JSON');
  }
  if (typeof meta !== 'object' || meta === null || meta.format !== SNAPSHOT_FORMAT) return undefined;
  const { checksum, ...unsigned } = meta;
  if (checksum !== sha256(JSON.stringify(unsigned))) throw new SnapshotRefusedError('meta.json checksum mismatch');
  return meta;
}

/**
 * Checks that the snapshot holds exactly the files its meta lists, each with its checksum.
 * @throws SnapshotRefusedError naming the first file missing, added or differing
 */
export async function verifySnapshotFiles(dataDir: string, meta: SnapshotMeta): Promise<void> {
  const root = join(dataDir, CURRENT);
  const present = (await filesUnder(root)).filter((path) => path !== 'meta.json');
  const listed = Object.keys(meta.files).sort();
  const missing = listed.find((path) => !present.includes(path));
  if (missing) throw new SnapshotRefusedError(`${missing} is missing`);
  const extra = present.find((path) => meta.files[path] === undefined);
  if (extra) throw new SnapshotRefusedError(`${extra} is not part of the snapshot`);
  for (const path of listed)
    if ((await sha256File(join(root, path))) !== meta.files[path])
      throw new SnapshotRefusedError(`${path} checksum mismatch`);
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists, under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * Removes the staging folders (`snapshot.tmp-<pid>`) of processes that are no longer running (a node
 * killed while writing); another live node sharing the data dir keeps its own. A snapshot swap cut
 * between its two renames left only `snapshot.old`: it becomes the current one again.
 */
export async function removeStaleStaging(dataDir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dataDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const removed: string[] = [];
  for (const name of names) {
    const pid = Number(STAGING.exec(name)?.[1]);
    if (!Number.isInteger(pid) || pid === process.pid || alive(pid)) continue;
    await rm(join(dataDir, name), { recursive: true, force: true });
    removed.push(name);
  }
  if (!names.includes(CURRENT) && names.includes(`${CURRENT}.old`)) {
    const old = await stat(join(dataDir, `${CURRENT}.old`));
    if (old.isDirectory()) await rename(join(dataDir, `${CURRENT}.old`), join(dataDir, CURRENT));
  }
  return removed;
}

export interface SnapshotEntities {
  entities: TrackedEntity[];
  /** name -> the definition entity its verdicts were decoded under, and the verdicts (undefined: valid). */
  verdicts: Map<string, { decodedUnder: DecodedUnder; verdicts: [Hex, string | undefined][] }>;
}

export async function readSnapshotEntities(dataDir: string): Promise<SnapshotEntities> {
  let raw: SerializedEntities;
  try {
    raw = JSON.parse(await readFile(join(dataDir, CURRENT, 'entities.json'), 'utf8')) as SerializedEntities;
  } catch (error) {
    throw new SnapshotRefusedError(`entities.json cannot be read (${(error as Error).message})`);
  }
  const verdicts: SnapshotEntities['verdicts'] = new Map();
  for (const [name, decodedUnder] of Object.entries(raw.decodedUnder))
    verdicts.set(name, { decodedUnder, verdicts: [] });
  const entities = raw.entities.map((s) => {
    if (s.verdict !== undefined) verdicts.get(s.collection)?.verdicts.push([s.key, s.verdict ?? undefined]);
    return deserialize(s);
  });
  return { entities, verdicts };
}

/** The folder a collection's store was saved in, or undefined if the snapshot has none for it. */
export function snapshotStoreDir(dataDir: string, meta: SnapshotMeta, name: string): string | undefined {
  const index = meta.collections.indexOf(name);
  return index < 0 ? undefined : storeDir(join(dataDir, CURRENT), index);
}
