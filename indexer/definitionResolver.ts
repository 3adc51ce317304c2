// Which definition each collection name resolves to: the live definition entities of the name, within
// the cap (admissionRounds.ts) and from its pinned owner if any, that parse; the first created wins and
// the others are reported as conflicts. Depends only on the table, so every node at a block agrees.
import type { Address, Hex } from 'viem';
import {
  DEFINITION_PAYLOAD_MAX_BYTES,
  parseCollectionDefinition,
  type CollectionDefinition,
} from '../src/collections/index.ts';
import {
  admitDefinitions,
  refusalOfNext,
  type Admission,
  type DefinitionCap,
  type DefinitionRefusal,
} from './admissionRounds.ts';
import type { TrackedEntities, TrackedEntity } from './trackedEntities.ts';

/** Logs a warning once per key (an entity's version, a set of conflicting keys). */
export type ReportOnce = (key: string, fields: Record<string, unknown>, message: string) => void;

/** A name's definition as resolved: the entity that wins, its parsed definition, and the ones ignored. */
export interface ResolvedDefinition {
  entity: TrackedEntity;
  definition: CollectionDefinition;
  conflicts: Hex[];
}

export interface DefinitionResolverOptions {
  pinnedOwners?: ReadonlyMap<string, Address>;
  definitionCap?: DefinitionCap;
  warn?: (fields: Record<string, unknown>, message: string) => void;
  reportOnce: ReportOnce;
  /** A name whose followed definitions changed with the admission (it must be resolved again). */
  onAdmissionChange: (name: string) => void;
}

/** Creation order: the chain's position of the create, then the key (positions are unique on one chain). */
const byCreation = (a: TrackedEntity, b: TrackedEntity) =>
  a.sequence < b.sequence ? -1 : a.sequence > b.sequence ? 1 : a.key < b.key ? -1 : a.key > b.key ? 1 : 0;

/**
 * Who a definition counts against: its creator, which ChangeOwner cannot move (an owner could hand each of
 * its definitions to a fresh address); the owner only when the chain did not say who created it.
 */
const creatorOf = (entity: TrackedEntity): Address => entity.creator ?? entity.owner;

export class DefinitionResolver {
  readonly #options: DefinitionResolverOptions;
  /** name -> the keys of its live definition entities. */
  readonly #definitions = new Map<string, Set<Hex>>();
  readonly #parsedDefinitions = new WeakMap<TrackedEntity, CollectionDefinition | Error>();
  /** name -> definitions of that name that were skipped (invalid or over the bounds) at the last resolve. */
  readonly #rejectedDefinitions = new Map<string, number>();
  /** Definitions within the cap (undefined: no cap), and whether a definition changed since computed. */
  #admission: Admission | undefined;
  #admissionStale = true;
  #skippedDefinitions = 0;

  constructor(options: DefinitionResolverOptions) {
    this.#options = options;
  }

  /** The names that have at least one live definition entity. */
  names(): Iterable<string> {
    return this.#definitions.keys();
  }

  /** Definition entities skipped (invalid, over the bounds) among the live ones. */
  get rejectedDefinitions(): number {
    let n = 0;
    for (const count of this.#rejectedDefinitions.values()) n += count;
    return n;
  }

  /** Live definition entities over the cap (per creator or in all), not followed; recomputed, not accumulated. */
  get skippedDefinitions(): number {
    return this.#skippedDefinitions;
  }

  /** Table change of a definition entity: keeps the name index and marks the admission stale. */
  index(entity: TrackedEntity, add: boolean): void {
    this.#admissionStale = true;
    let keys = this.#definitions.get(entity.collection);
    if (!keys) this.#definitions.set(entity.collection, (keys = new Set()));
    if (add) keys.add(entity.key);
    else keys.delete(entity.key);
    if (!keys.size) this.#definitions.delete(entity.collection);
  }

  /**
   * Recomputes which definitions are within the cap when a definition changed, and marks the names whose
   * followed definitions changed. Depends only on the table (creation positions, creators, keys).
   */
  admit(table: TrackedEntities): void {
    const cap = this.#options.definitionCap;
    if (!cap || !this.#admissionStale) return;
    this.#admissionStale = false;
    const pinned = this.#options.pinnedOwners;
    const entities: TrackedEntity[] = [];
    for (const [name, keys] of this.#definitions) {
      if (pinned?.has(name)) continue;
      for (const key of keys) {
        const entity = table.get(key);
        if (entity) entities.push(entity);
      }
    }
    entities.sort(byCreation);
    const admission = admitDefinitions(
      entities.map((entity) => ({ key: entity.key, creator: creatorOf(entity) })),
      cap,
    );
    const { admitted } = admission;
    const before = this.#admission?.admitted;
    for (const entity of entities)
      if ((before?.has(entity.key) ?? false) !== admitted.has(entity.key))
        this.#options.onAdmissionChange(entity.collection);
    const skipped = entities.length - admitted.size;
    if (skipped > 0 && skipped !== this.#skippedDefinitions)
      this.#options.warn?.(
        { skipped, per_creator: cap.perCreator, total: cap.total },
        'collection definitions over the cap skipped (shared out by creator, the earliest created first)',
      );
    this.#skippedDefinitions = skipped;
    this.#admission = admission;
  }

  /** Why the live definition `key` is not followed, as of the last resolve (undefined: followed, or unknown). */
  refusal(key: Hex): DefinitionRefusal | undefined {
    return this.#admission?.refused.get(key);
  }

  /** Whether a definition of `name` that `creator` writes next would be followed (undefined) or why not. */
  refusalOfNext(creator: Address, name: string): DefinitionRefusal | undefined {
    const pinned = this.#options.pinnedOwners?.get(name);
    if (pinned) return pinned === creator.toLowerCase() ? undefined : { reason: 'pinned', owner: pinned };
    const cap = this.#options.definitionCap;
    if (!cap) return undefined;
    return refusalOfNext(this.#admission?.created ?? new Map(), creator.toLowerCase() as Address, cap);
  }

  #parse(entity: TrackedEntity): CollectionDefinition | undefined {
    let parsed = this.#parsedDefinitions.get(entity);
    if (parsed === undefined) {
      try {
        if (entity.oversize !== undefined)
          throw new Error(
            `definition is ${entity.oversize} decoded bytes; its payload may have at most ${DEFINITION_PAYLOAD_MAX_BYTES}`,
          );
        parsed = parseCollectionDefinition(entity.content?.payload ?? new Uint8Array());
      } catch (error) {
        parsed = error as Error;
      }
      this.#parsedDefinitions.set(entity, parsed);
    }
    if (parsed instanceof Error) {
      this.#options.reportOnce(
        `def:${entity.key}:${entity.lastModifiedAtBlock}`,
        { collection: entity.collection, key: entity.key, reason: parsed.message },
        'collection definition rejected',
      );
      return undefined;
    }
    return parsed;
  }

  /** The definition `name` resolves to in `table` (undefined: none counts). */
  resolve(name: string, table: TrackedEntities): ResolvedDefinition | undefined {
    const pinned = this.#options.pinnedOwners?.get(name);
    this.admit(table);
    const admitted = pinned ? undefined : this.#admission?.admitted;
    const candidates = [...(this.#definitions.get(name) ?? [])]
      // The name index and the table change together; a key missing from the table simply does not compete.
      .flatMap((key) => table.get(key) ?? [])
      .filter((entity) => (!pinned || entity.owner === pinned) && (!admitted || admitted.has(entity.key)))
      .sort(byCreation);
    const valid = candidates.flatMap((entity) => {
      const definition = this.#parse(entity);
      return definition ? [{ entity, definition }] : [];
    });
    if (candidates.length > valid.length) this.#rejectedDefinitions.set(name, candidates.length - valid.length);
    else this.#rejectedDefinitions.delete(name);
    const [winner, ...rest] = valid;
    if (!winner) return undefined;
    const conflicts = rest.map((v) => v.entity.key);
    if (conflicts.length) {
      this.#options.reportOnce(
        `conflict:${name}:${conflicts.join(',')}`,
        { collection: name, winner: winner.entity.key, ignored: conflicts },
        'several definitions for one collection name; the first created wins',
      );
    }
    return { ...winner, conflicts };
  }
}
