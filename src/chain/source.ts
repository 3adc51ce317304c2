// What the indexer reads from a chain, whatever its protocol: the head (and, optionally, a push of new
// heads), blocks as entity operations, and the live entities at a block, page by page. The indexer talks
// only to this interface; `v1/source.ts` implements it for Arkiv v1 (ARCHITECTURE.md §7).
import type { Address, Hex } from 'viem';
import type { EntityOp } from './operations.ts';

export interface BlockHeader {
  number: number;
  hash: Hex;
  parentHash: Hex;
  timestamp: number;
}

/** A block as the entity operations it applied, in chain order. */
export interface SourceBlock extends BlockHeader {
  ops: EntityOp[];
  /** Successful transactions the driver could not understand (never expected on a real node): logged, counted. */
  anomalies: string[];
}

/** One live entity at a block with every field the indexer keeps; the payload stays hex (oversize: only measured). */
export interface ChainEntity {
  key: Hex;
  value?: Hex;
  contentType?: string;
  expiresAt: number | string;
  owner: Address;
  creator?: Address;
  createdAtBlock?: number;
  lastModifiedAtBlock?: number;
  transactionIndexInBlock?: number;
  operationIndexInTransaction?: number;
  stringAttributes?: { key: string; value: string }[];
  numericAttributes?: { key: string; value: number | string }[];
}

/**
 * Which entities a query selects: every listed string attribute equals its value, or one of its values
 * (an array). Each driver renders it in its own query language.
 * @example { strings: { arkivector_type: 'vector', arkivector_collection: ['a', 'b'] } }
 */
export interface EntitySelector {
  strings: Readonly<Record<string, string | readonly string[]>>;
}

export interface PageOptions {
  /** Entities per page (a driver caps it at its node's limit). */
  pageSize?: number;
  /** Stop after this many pages (a bound on hostile or runaway cursors). */
  maxPages?: number;
  /** Fail the walk once it has run this many milliseconds (no bound when absent). */
  maxMs?: number;
  /**
   * Awaited before each call of the walk (a page, or a page asked again in halves): the caller's pacing to
   * a call budget (the indexer's bootstrap waits there for `--rpc-budget`).
   */
  beforeCall?: () => Promise<void>;
}

/**
 * The blocks after a known one up to `end`, of which only those with entity operations (or anomalies) are
 * listed: every block between them carried nothing for the indexer. `end` is the header of the last block
 * covered; it may stop short of the block asked for (a driver bounds a range).
 */
export interface SourceSpan {
  blocks: SourceBlock[];
  end: BlockHeader;
}

export interface HeadWatch {
  close(): void;
}

export interface ChainSource {
  chainId(): Promise<number>;
  head(): Promise<number>;
  /** Headers of the given blocks in one round trip; a block the node lacks is undefined. */
  headers(numbers: readonly number[]): Promise<(BlockHeader | undefined)[]>;
  /** The head and one block's header in one round trip (the follower's per-step canonical check). */
  headAndHeader(block: number): Promise<{ head: number; header: BlockHeader | undefined }>;
  /**
   * Blocks `from..to` as entity operations. Throws ChainDataError if a block is missing or its data does
   * not line up. A driver whose chain has no expiry events derives the `expire` ops itself.
   */
  blocks(from: number, to: number): Promise<SourceBlock[]>;
  /**
   * Optional: blocks after `after` up to at most `to`, skipping those that carry nothing (a chain whose
   * registry logs say which blocks to read). The driver checks that what it read chains onto `after` (its
   * hash) and that each listed block is the one the chain has; the indexer keeps `end`'s hash and checks it
   * at the next step, as for any block it applied. Throws ChainDataError when the reads do not line up.
   */
  span?(after: { number: number; hash: Hex }, to: number): Promise<SourceSpan>;
  /**
   * Visits every entity the selector matches as of block `atBlock`, page by page, so a caller can drop
   * what it does not keep before the next page arrives.
   */
  forEachEntityPage(
    selector: EntitySelector,
    atBlock: number,
    visit: (page: ChainEntity[]) => void,
    options?: PageOptions,
  ): Promise<void>;
  /** One entity as of block `atBlock` (its creation facts, its payload), or undefined if it was not live. */
  entityAt(key: Hex, atBlock: number): Promise<ChainEntity | undefined>;
  /**
   * Optional push of new heads (a WebSocket subscription). Polling stays the source of truth: this only
   * wakes the follower sooner, and failures reconnect quietly.
   */
  watchHeads?(onHead: (block: number) => void): HeadWatch;
}

/** A block the node does not have (yet) or an answer that breaks the protocol's shapes. */
export class ChainDataError extends Error {
  override name = 'ChainDataError';
}
