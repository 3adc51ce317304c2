// Entity state of the devnet: the live entities at the head plus every version ever written, so that
// arkiv_query can answer "as of block B" exactly like the node's query store.
import type { Address, Hex } from 'viem';

export interface EntityVersion {
  /** Row id, allocated per written version; arkiv_query orders by it, newest first. */
  readonly id: number;
  readonly key: Hex;
  readonly owner: Address;
  readonly creator: Address;
  readonly contentType: string;
  readonly payload: Uint8Array;
  readonly stringAttributes: ReadonlyMap<string, string>;
  readonly numericAttributes: ReadonlyMap<string, bigint>;
  readonly expiresAt: bigint;
  readonly createdAtBlock: number;
  readonly lastModifiedAtBlock: number;
  readonly transactionIndexInBlock: number;
  readonly operationIndexInTransaction: number;
  /** block << 32 | txIndex << 16 | opIndex of the create. */
  readonly sequence: bigint;
  /** First block at which this version is visible. */
  readonly validFrom: number;
  /** First block at which it is no longer visible (replaced, deleted or expired); undefined while live. */
  validTo?: number;
}

export type EntityFields = Omit<EntityVersion, 'id' | 'validFrom' | 'validTo'>;

export class EntityState {
  readonly live = new Map<Hex, EntityVersion>();
  /** Ascending by id. */
  readonly versions: EntityVersion[] = [];
  readonly #expiring = new Map<bigint, Set<Hex>>();
  #nextId = 1;

  get(key: Hex): EntityVersion | undefined {
    return this.live.get(key);
  }

  /** Writes a new version of an entity visible from `block` on, closing the previous one. */
  write(fields: EntityFields, block: number): EntityVersion {
    this.#close(fields.key, block);
    const version: EntityVersion = { ...fields, id: this.#nextId++, validFrom: block };
    this.versions.push(version);
    this.live.set(version.key, version);
    this.#trackExpiry(version.key, version.expiresAt);
    return version;
  }

  remove(key: Hex, block: number): void {
    this.#close(key, block);
    this.live.delete(key);
  }

  /** Keys whose expiresAt equals `block`, in the order they were scheduled. */
  expiringAt(block: number): Hex[] {
    const keys = this.#expiring.get(BigInt(block));
    if (!keys) return [];
    this.#expiring.delete(BigInt(block));
    return [...keys].filter((key) => this.live.get(key)?.expiresAt === BigInt(block));
  }

  #close(key: Hex, block: number): void {
    const previous = this.live.get(key);
    if (!previous) return;
    previous.validTo = block;
    this.#expiring.get(previous.expiresAt)?.delete(key);
  }

  #trackExpiry(key: Hex, expiresAt: bigint): void {
    let keys = this.#expiring.get(expiresAt);
    if (!keys) this.#expiring.set(expiresAt, (keys = new Set()));
    keys.add(key);
  }
}

/** Whether a version is visible in the state as of `block`. */
export const visibleAt = (version: EntityVersion, block: number): boolean =>
  version.validFrom <= block && (version.validTo === undefined || version.validTo > block);
