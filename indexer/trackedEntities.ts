// The raw arkivector entities the indexer follows (collection definitions and vectors, valid or not),
// keyed by entity key, with a per-block journal so a reorg can roll them back exactly.
// Everything a collection store holds is derived from this table by the resolver.
import type { Address, Hex } from 'viem';

export type EntityKind = 'collection' | 'vector';

/** One live entity as of the last applied block. Immutable: every change makes a new object. */
export interface TrackedEntity {
  readonly key: Hex;
  readonly kind: EntityKind;
  readonly collection: string;
  readonly owner: Address;
  readonly creator: Address | undefined;
  readonly contentType: string;
  readonly payload: Uint8Array;
  readonly stringAttributes: ReadonlyMap<string, string>;
  readonly numericAttributes: ReadonlyMap<string, bigint>;
  readonly expiresAt: bigint;
  readonly lastModifiedAtBlock: number;
  /** block << 32 | txIndex << 16 | opIndex of the create: the first definition of a name wins. */
  readonly sequence: bigint;
}

export const TYPE_ATTRIBUTE = 'arkivector_type';
export const COLLECTION_ATTRIBUTE = 'arkivector_collection';

/** Which arkivector entity (if any) a set of string attributes describes. */
export function classify(
  stringAttributes: ReadonlyMap<string, string>,
): { kind: EntityKind; collection: string } | undefined {
  const type = stringAttributes.get(TYPE_ATTRIBUTE);
  const collection = stringAttributes.get(COLLECTION_ATTRIBUTE);
  if ((type !== 'collection' && type !== 'vector') || collection === undefined) return undefined;
  return { kind: type, collection };
}

export type EntityChangeListener = (previous: TrackedEntity | undefined, next: TrackedEntity | undefined) => void;

interface JournalEntry {
  block: number;
  previous: Map<Hex, TrackedEntity | undefined>;
}

export class TrackedEntities {
  readonly #entities = new Map<Hex, TrackedEntity>();
  readonly #journal: JournalEntry[] = [];
  readonly #depth: number;
  #current: JournalEntry | undefined;

  /** @param journalDepth how many recent blocks can be rolled back */
  constructor(
    private readonly onChange: EntityChangeListener,
    journalDepth = 256,
  ) {
    this.#depth = journalDepth;
  }

  get size(): number {
    return this.#entities.size;
  }

  get(key: Hex): TrackedEntity | undefined {
    return this.#entities.get(key);
  }

  values(): IterableIterator<TrackedEntity> {
    return this.#entities.values();
  }

  /** Oldest block the journal can roll back to (inclusive), or undefined when it is empty. */
  get rollbackHorizon(): number | undefined {
    return this.#journal.length ? this.#journal[0].block - 1 : undefined;
  }

  beginBlock(block: number): void {
    this.#current = { block, previous: new Map() };
  }

  endBlock(): void {
    if (!this.#current) return;
    this.#journal.push(this.#current);
    if (this.#journal.length > this.#depth) this.#journal.shift();
    this.#current = undefined;
  }

  /** Undoes the block in progress (a step that failed half-way), leaving the table as before beginBlock. */
  abortBlock(): void {
    const entry = this.#current;
    this.#current = undefined;
    if (entry) this.#undo(entry);
  }

  /** Drops the journal (after a bootstrap or a snapshot load nothing older can be rolled back). */
  resetJournal(): void {
    this.#journal.length = 0;
  }

  set(key: Hex, next: TrackedEntity | undefined): void {
    const previous = this.#entities.get(key);
    if (previous === next) return;
    if (this.#current && !this.#current.previous.has(key)) this.#current.previous.set(key, previous);
    if (next) this.#entities.set(key, next);
    else this.#entities.delete(key);
    this.onChange(previous, next);
  }

  /** Whether the journal reaches back to `block`. */
  canRollBackTo(block: number): boolean {
    return this.#journal.length > 0 && this.#journal[0].block <= block + 1;
  }

  /** Undoes every block after `block`; the caller checked canRollBackTo. */
  rollBackTo(block: number): void {
    while (this.#journal.length && this.#journal[this.#journal.length - 1].block > block)
      this.#undo(this.#journal.pop()!);
  }

  #undo(entry: JournalEntry): void {
    for (const [key, previous] of entry.previous) {
      const now = this.#entities.get(key);
      if (previous) this.#entities.set(key, previous);
      else this.#entities.delete(key);
      this.onChange(now, previous);
    }
  }
}
