// Snapshots for --data-dir: the tracked entities and every collection store, written with the block
// number and hash they reflect. A snapshot is loaded on start only if that block is still canonical.
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Address, Hex } from 'viem';
import type { IndexedStore } from '../src/engine/index.ts';
import { restoredEntity, type EntityContent, type TrackedEntity } from './trackedEntities.ts';

/**
 * 2: vector entities without payloads or attributes (the stores hold their records), with the resolver's
 * verdicts, so a restart decodes nothing. A snapshot of another format is not loaded (the node rebuilds).
 */
export const SNAPSHOT_FORMAT = 2;
const CURRENT = 'snapshot';

export interface SnapshotMeta {
  format: number;
  chainId: number;
  block: number;
  hash: Hex;
  collections: string[];
  writtenAt: string;
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
  meta: Omit<SnapshotMeta, 'format' | 'collections' | 'writtenAt'>,
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

export interface SnapshotEntities {
  entities: TrackedEntity[];
  /** name -> the definition entity its verdicts were decoded under, and the verdicts (undefined: valid). */
  verdicts: Map<string, { decodedUnder: DecodedUnder; verdicts: [Hex, string | undefined][] }>;
}

export async function readSnapshotEntities(dataDir: string): Promise<SnapshotEntities> {
  const raw = JSON.parse(await readFile(join(dataDir, CURRENT, 'entities.json'), 'utf8')) as SerializedEntities;
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
