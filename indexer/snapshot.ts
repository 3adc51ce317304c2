// Snapshots for --data-dir: the tracked entities and every collection store, written with the block
// number and hash they reflect. A snapshot is loaded on start only if that block is still canonical.
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Address, Hex } from 'viem';
import type { IndexedStore } from '../src/engine/index.ts';
import type { TrackedEntity } from './trackedEntities.ts';

const SNAPSHOT_FORMAT = 1;
const CURRENT = 'snapshot';

export interface SnapshotMeta {
  format: number;
  chainId: number;
  block: number;
  hash: Hex;
  collections: string[];
  writtenAt: string;
}

interface SerializedEntity {
  key: Hex;
  kind: TrackedEntity['kind'];
  collection: string;
  owner: Address;
  creator?: Address;
  contentType: string;
  payload: string;
  strings: [string, string][];
  numbers: [string, string][];
  expiresAt: string;
  lastModifiedAtBlock: number;
  sequence: string;
  oversize?: number;
}

const serialize = (e: TrackedEntity): SerializedEntity => ({
  key: e.key,
  kind: e.kind,
  collection: e.collection,
  owner: e.owner,
  creator: e.creator,
  contentType: e.contentType,
  payload: Buffer.from(e.payload).toString('base64'),
  strings: [...e.stringAttributes],
  numbers: [...e.numericAttributes].map(([k, v]) => [k, v.toString()]),
  expiresAt: e.expiresAt.toString(),
  lastModifiedAtBlock: e.lastModifiedAtBlock,
  sequence: e.sequence.toString(),
  ...(e.oversize !== undefined ? { oversize: e.oversize } : {}),
});

const deserialize = (s: SerializedEntity): TrackedEntity => ({
  key: s.key,
  kind: s.kind,
  collection: s.collection,
  owner: s.owner,
  creator: s.creator,
  contentType: s.contentType,
  payload: new Uint8Array(Buffer.from(s.payload, 'base64')),
  stringAttributes: new Map(s.strings),
  numericAttributes: new Map(s.numbers.map(([k, v]) => [k, BigInt(v)])),
  expiresAt: BigInt(s.expiresAt),
  lastModifiedAtBlock: s.lastModifiedAtBlock,
  sequence: BigInt(s.sequence),
  ...(s.oversize !== undefined ? { oversize: s.oversize } : {}),
});

const storeDir = (dir: string, index: number) => join(dir, 'stores', String(index));

/** Writes a complete snapshot next to the current one, then swaps it in (a crash leaves the old one). */
export async function writeSnapshot(
  dataDir: string,
  meta: Omit<SnapshotMeta, 'format' | 'collections' | 'writtenAt'>,
  entities: Iterable<TrackedEntity>,
  stores: ReadonlyMap<string, IndexedStore>,
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
  await writeFile(join(staging, 'entities.json'), JSON.stringify([...entities].map(serialize)));
  const full: SnapshotMeta = {
    format: SNAPSHOT_FORMAT,
    ...meta,
    collections: names,
    writtenAt: new Date().toISOString(),
  };
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

export async function readSnapshotMeta(dataDir: string): Promise<SnapshotMeta | undefined> {
  try {
    const meta = JSON.parse(await readFile(join(dataDir, CURRENT, 'meta.json'), 'utf8')) as SnapshotMeta;
    return meta.format === SNAPSHOT_FORMAT ? meta : undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

export async function readSnapshotEntities(dataDir: string): Promise<TrackedEntity[]> {
  const raw = JSON.parse(await readFile(join(dataDir, CURRENT, 'entities.json'), 'utf8')) as SerializedEntity[];
  return raw.map(deserialize);
}

/** The folder a collection's store was saved in, or undefined if the snapshot has none for it. */
export function snapshotStoreDir(dataDir: string, meta: SnapshotMeta, name: string): string | undefined {
  const index = meta.collections.indexOf(name);
  return index < 0 ? undefined : storeDir(join(dataDir, CURRENT), index);
}
