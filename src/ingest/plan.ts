// The difference between a file's chunks and what the collection holds for its source: which chunk
// entities to create, update (changed text, or about to expire) and delete. Pure, so it is tested alone.
import { createHash } from 'node:crypto';
// Entity ids are at most ID_MAX_BYTES; a readable `source#chunk` id is used while it fits.
import { ID_MAX_BYTES } from '../collections/limits.ts';
import type { Chunk } from './chunk.ts';
import type { RemoteChunk } from './remote.ts';

/** An unchanged chunk that expires within this many blocks (7 days of 2 s blocks) is written again. */
export const INGEST_REFRESH_BLOCKS = 302_400;

export interface ChunkEntity {
  id: string;
  document: string;
  attributes: { source: string; chunk: number; content_sha: string };
}

export interface FilePlan {
  source: string;
  creates: ChunkEntity[];
  updates: ChunkEntity[];
  /** Ids, highest chunk first, so an interrupted delete leaves a prefix of chunks (chunk 0 last). */
  deletes: string[];
  unchanged: number;
}

/** The stable id of a source's chunk: `source#chunk`, or a hash of the source when that is too long. */
export function chunkId(source: string, chunk: number): string {
  const readable = `${source}#${chunk}`;
  if (Buffer.byteLength(readable, 'utf8') <= ID_MAX_BYTES) return readable;
  return `sha256:${createHash('sha256').update(source, 'utf8').digest('hex')}#${chunk}`;
}

export function planFile(
  source: string,
  chunks: readonly Chunk[],
  remote: readonly RemoteChunk[],
  asOfBlock: number,
): FilePlan {
  const kept = new Set(chunks.map((c) => c.index));
  // An entity of this source under another id (written by another tool, or a duplicate) is replaced.
  const ours = remote.filter((r) => r.id === chunkId(source, r.chunk));
  const byIndex = new Map(ours.map((r) => [r.chunk, r]));
  const plan: FilePlan = { source, creates: [], updates: [], deletes: [], unchanged: 0 };
  for (const c of chunks) {
    const entity: ChunkEntity = {
      id: chunkId(source, c.index),
      document: c.text,
      attributes: { source, chunk: c.index, content_sha: c.sha },
    };
    const existing = byIndex.get(c.index);
    if (!existing) plan.creates.push(entity);
    else if (existing.sha !== c.sha || existing.expiresAtBlock - asOfBlock < INGEST_REFRESH_BLOCKS)
      plan.updates.push(entity);
    else plan.unchanged++;
  }
  plan.deletes = remote
    .filter((r) => !kept.has(r.chunk) || r.id !== chunkId(source, r.chunk))
    .sort((a, b) => b.chunk - a.chunk)
    .map((r) => r.id);
  return plan;
}

/** A source whose file is gone: every chunk goes (with --prune). */
export function planRemoval(source: string, remote: readonly RemoteChunk[]): FilePlan {
  return planFile(source, [], remote, 0);
}
