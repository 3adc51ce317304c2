// What readers see of a collection: the published shape the service reads, built from the resolver's
// state at each commit, and the owner history that records a name passing from one owner to another.
import type { Address, Hex } from 'viem';
import type { CollectionDefinition } from '../src/collections/index.ts';
import type { IndexedStore } from '../src/engine/index.ts';
import type { TrackedEntity } from './trackedEntities.ts';

export interface CollectionStats {
  live_entities: number;
  rejected: number;
  shadowed: number;
}

/** A collection as readers see it at the last applied block. */
export interface PublishedCollection<S extends IndexedStore = IndexedStore> {
  readonly name: string;
  readonly definition: CollectionDefinition;
  readonly definitionKey: Hex;
  /** Block in which the definition entity was created. */
  readonly definitionCreatedAtBlock: number;
  /** Block at which the definition entity expires unless someone extends it. */
  readonly definitionExpiresAt: bigint;
  readonly owner: Address;
  readonly store: S;
  /** Other live definitions of the same name, ignored. */
  readonly conflicts: readonly Hex[];
  readonly stats: CollectionStats;
  /**
   * Set when this node saw the name pass from one owner to another (a lapsed definition replaced by
   * another owner's, or a ChangeOwner of the definition): the owner before and the block of the change.
   */
  readonly ownerChange?: { readonly previousOwner: Address; readonly atBlock: number };
  /**
   * Block in which the entity now stored for `id` was last created or updated (undefined unless it is
   * `key`). Answers for the last commit: call it in the same synchronous step as reading the store.
   */
  lastModifiedAt(id: string, key: string): number | undefined;
}

/** The resolver's state of one collection, between commits. */
export interface CollectionState<S extends IndexedStore> {
  name: string;
  definitionEntity: TrackedEntity;
  definition: CollectionDefinition;
  conflicts: Hex[];
  store: S;
  /** id -> the entity currently in the store */
  winners: Map<string, TrackedEntity>;
  perId: Map<string, { rejected: number; shadowed: number }>;
  rejected: number;
  shadowed: number;
}

/** Who owns each name, so that a name passing to another owner is recorded and logged. */
export class OwnerHistory {
  readonly #owners = new Map<string, { owner: Address; change?: { previousOwner: Address; atBlock: number } }>();

  constructor(private readonly logger?: { warn(fields: Record<string, unknown>, message: string): void }) {}

  /** Records that `name` is owned by `owner` at `block`; the change of owner recorded for it, if any. */
  see(name: string, owner: Address, block: number) {
    const seen = this.#owners.get(name);
    if (seen && seen.owner !== owner) {
      const change = { previousOwner: seen.owner, atBlock: block };
      this.#owners.set(name, { owner, change });
      this.logger?.warn(
        { collection: name, previous_owner: seen.owner, owner, block },
        'collection name passed to another owner',
      );
      return change;
    }
    if (!seen) this.#owners.set(name, { owner });
    return seen?.change;
  }
}

/** The collections readers see after a commit at `block`. */
export function publish<S extends IndexedStore>(
  states: ReadonlyMap<string, CollectionState<S>>,
  owners: OwnerHistory,
  block: number,
): ReadonlyMap<string, PublishedCollection<S>> {
  return new Map(
    [...states].map(([name, s]) => [
      name,
      {
        ownerChange: owners.see(name, s.definitionEntity.owner, block),
        name,
        definition: s.definition,
        definitionKey: s.definitionEntity.key,
        definitionCreatedAtBlock: Number(s.definitionEntity.sequence >> 32n),
        definitionExpiresAt: s.definitionEntity.expiresAt,
        owner: s.definitionEntity.owner,
        store: s.store,
        conflicts: s.conflicts,
        stats: { live_entities: s.winners.size, rejected: s.rejected, shadowed: s.shadowed },
        lastModifiedAt: (id: string, key: string) => {
          const winner = s.winners.get(id);
          return winner?.key === key ? winner.lastModifiedAtBlock : undefined;
        },
      },
    ]),
  );
}
