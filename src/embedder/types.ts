// What the rest of the node knows of an embedder: a model that turns text into vectors, in this process
// or behind an endpoint, and what it is doing now (for /v1/status and the instructions).

/**
 * What an embedder is doing, for /v1/status and the instructions: the local model's fetch and load, or an
 * embeddings server's last answer (`idle` until it is first asked, then `ready` or `failed`).
 */
export interface EmbedderState {
  /** `idle`: the model is fetched and loaded at the first text call. */
  state: 'idle' | 'fetching' | 'loading' | 'ready' | 'failed';
  /** Where it comes from: the hub repository and revision, a folder, or the endpoint. */
  source: string;
  /** Fetching: the file, bytes so far and in all (when the hub said). */
  file?: string;
  received_bytes?: number;
  total_bytes?: number | null;
  dim?: number;
  /**
   * Failed: why, and its cause (local: `unreachable`, `refused`, `too_large`, `hash_mismatch`, `stalled`,
   * `invalid`, `no_runtime`, …; a server: `refused`, `unreachable`, `timeout`, `http_status`, `bad_answer`,
   * `wrong_dimension`).
   */
  error?: string;
  cause?: string;
  /** Failed (local): no text call tries again before this time (ISO), unless the model appears on disk. */
  retry_at?: string;
  /** Failed: every way to text without this model loading here. */
  ways_out?: string;
}

export interface Embedder {
  readonly model: string;
  /** `local` (in-process) or `http` (an embeddings endpoint). */
  readonly kind?: 'local' | 'http';
  /** A local model read from a folder (`local:PATH`) or fetched from the hub. */
  readonly from?: 'folder' | 'hub';
  /** Embeds a search text (a query: e5 models get their "query: " prefix). */
  embed(text: string): Promise<number[]>;
  /** Embeds documents to store, in input order, batched (e5: "passage: " prefix). */
  embedMany?(texts: readonly string[]): Promise<number[][]>;
  /**
   * The model's dimension: the local catalog knows it before the fetch; an endpoint is asked once by
   * embedding a probe text (a failed probe is tried again at the next call).
   */
  dimension(): Promise<number>;
  /** The dimension if known now without loading or fetching anything; undefined when it is not. */
  knownDimension?(): number | undefined;
  state?(): EmbedderState;
}
