// What the collection holds for each source, read from the gateway (so from the chain): every chunk's id,
// index, content hash and expiry. Search answers at most SEARCH_K_MAX entities, so reads page by chunk
// range (a source's chunk indexes are unique) and enumerate sources by bisecting the source range.
import type { RestClient } from '../client/restClient.ts';
import { SEARCH_K_MAX } from '../service/limits.ts';
import { INGEST_MAX_CHUNKS_PER_FILE } from './chunk.ts';
import { politely } from './retry.ts';

/** The attributes an ingested chunk carries (and `--create` declares). */
export const INGEST_ATTRIBUTES = { source: 'str', chunk: 'i32', content_sha: 'str' } as const;

export interface RemoteChunk {
  id: string;
  chunk: number;
  sha: string | undefined;
  expiresAtBlock: number;
}

/** Most range queries one source listing may take; sources without chunk 0 beyond this are not found. */
const MAX_SOURCE_QUERIES = 10_000;

// biome-ignore lint/suspicious/noExplicitAny: the REST answers of docs/rest.md
type Json = any;

export class RemoteCollection {
  readonly #client: RestClient;
  readonly #name: string;
  readonly #probe: number[];
  /** Filter clause limiting reads to the signer's entities (none when the gateway has no signer). */
  readonly #mine: Json[];
  /** The block the last read reflected. */
  asOfBlock = 0;

  /** @param signer the gateway signer's address: only its entities are read (and so replaced or deleted) */
  constructor(client: RestClient, name: string, dim: number, signer?: string) {
    this.#client = client;
    this.#name = name;
    this.#mine = signer === undefined ? [] : [{ eq: { $owner: signer.toLowerCase() } }];
    // The filter decides what comes back; the vector only has to be valid for the collection.
    this.#probe = Array.from({ length: dim }, (_, i) => (i === 0 ? 1 : 0));
  }

  /** Every chunk of `source` on chain (the signer's), by index. */
  async chunksOf(source: string): Promise<RemoteChunk[]> {
    const total = await this.#count({ and: [{ eq: { source } }, ...this.#mine] });
    const found: RemoteChunk[] = [];
    for (let from = 0; found.length < total && from < INGEST_MAX_CHUNKS_PER_FILE * 2; from += SEARCH_K_MAX) {
      const filter = {
        and: [{ eq: { source } }, { gte: { chunk: from } }, { lt: { chunk: from + SEARCH_K_MAX } }, ...this.#mine],
      };
      for (const hit of await this.#search(filter)) found.push(toChunk(hit));
    }
    return found.sort((a, b) => a.chunk - b.chunk);
  }

  /** Every source that has a chunk 0 of the signer's (ingest writes chunk 0 first and deletes it last). */
  async sources(): Promise<string[]> {
    const out = new Set<string>();
    let queries = 0;
    const walk = async (lo: string | undefined, hi: string | undefined): Promise<void> => {
      if (++queries > MAX_SOURCE_QUERIES) throw new Error('too many sources to enumerate');
      const parts: Json[] = [{ eq: { chunk: 0 } }, ...this.#mine];
      if (lo !== undefined) parts.push({ gt: { source: lo } });
      if (hi !== undefined) parts.push({ lte: { source: hi } });
      const filter = { and: parts };
      const total = await this.#count(filter);
      if (total === 0) return;
      const hits = (await this.#search(filter)).map((h) => String(h.attributes?.source?.value));
      if (total <= SEARCH_K_MAX) {
        for (const s of hits) out.add(s);
        return;
      }
      // Both halves hold at least a quarter of the k seen, so each holds fewer than `total`.
      const sorted = [...new Set(hits)].sort(bytewise);
      const mid = sorted[Math.floor(sorted.length / 2) - 1];
      await walk(lo, mid);
      await walk(mid, hi);
    };
    await walk(undefined, undefined);
    return [...out].sort(bytewise);
  }

  async #count(filter: Json): Promise<number> {
    const answer = await politely(() => this.#client.count(this.#name, { filter }));
    this.asOfBlock = Math.max(this.asOfBlock, answer.as_of_block ?? 0);
    return answer.count;
  }

  async #search(filter: Json): Promise<Json[]> {
    const answer = await politely(() =>
      this.#client.search(this.#name, { vector: this.#probe, k: SEARCH_K_MAX, filter, include_document: false }),
    );
    this.asOfBlock = Math.max(this.asOfBlock, answer.as_of_block ?? 0);
    return answer.results ?? [];
  }
}

function toChunk(hit: Json): RemoteChunk {
  const sha = hit.attributes?.content_sha?.value;
  return {
    id: String(hit.id),
    chunk: Number(hit.attributes?.chunk?.value),
    sha: typeof sha === 'string' ? sha : undefined,
    // "never": a chunk kept until deleted is never written again for its lifetime.
    expiresAtBlock: hit.expires_at_block === 'never' ? Number.POSITIVE_INFINITY : Number(hit.expires_at_block ?? 0),
  };
}

/** Go's (and the gateway's) string order: by UTF-8 bytes, i.e. by code point. */
export function bytewise(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
