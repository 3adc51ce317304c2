// Entity state of the DB-chain devnet: every entity ever created with each version it went through, so
// reads answer "as of block B" (arkiv_query atBlock, arkiv_getEntity's block) like the node's store, plus
// the per-owner entity nonce that key derivation uses (arkiv-gen-d.md §2).
import type { Address, Hex } from 'viem';
import type { Cell } from '../../chain/dbchain/index.ts';

export interface DbEntity {
  readonly key: Hex;
  readonly owner: Address;
  readonly creator: Address;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly expiresAt: bigint;
  readonly creationFlags: number;
  readonly contentType: string;
  readonly payload: Hex;
  /** User attributes, strictly ascending by name (the system cells are lifted into the fields above). */
  readonly attributes: readonly Cell[];
}

interface Version {
  readonly entity: DbEntity;
  readonly validFrom: number;
  /** First block at which it is replaced or deleted; undefined while it is the stored one. */
  validTo?: number;
}

/** An entity's row: the id the node orders results by (assigned when its create commits) and its versions. */
export interface DbRecord {
  readonly id: number;
  readonly versions: Version[];
}

/** "Live" means `expiresAt > block` (§1.9); an expired entity stays stored until deleted. */
export const isLive = (entity: DbEntity, block: number): boolean => entity.expiresAt > BigInt(block);

export class DbEntityState {
  /** Ascending by id (id = index + 1). */
  readonly records: DbRecord[] = [];
  readonly #byKey = new Map<Hex, DbRecord>();
  readonly #nonces = new Map<Address, bigint>();

  /** The stored entity (live or expired, not deleted). */
  stored(key: Hex): DbEntity | undefined {
    const last = this.#byKey.get(key)?.versions.at(-1);
    return last && last.validTo === undefined ? last.entity : undefined;
  }

  /** The entity as stored after block `block`, if it was live then. */
  at(key: Hex, block: number): DbEntity | undefined {
    const record = this.#byKey.get(key);
    return record && versionAt(record, block);
  }

  nonce(owner: Address): bigint {
    return this.#nonces.get(owner) ?? 0n;
  }

  advanceNonce(owner: Address, by: number): void {
    if (by > 0) this.#nonces.set(owner, this.nonce(owner) + BigInt(by));
  }

  /** Writes an entity's new version from `block` on; a new key gets the next id. */
  write(entity: DbEntity, block: number): void {
    let record = this.#byKey.get(entity.key);
    if (!record) {
      record = { id: this.records.length + 1, versions: [] };
      this.records.push(record);
      this.#byKey.set(entity.key, record);
    }
    close(record, block);
    record.versions.push({ entity, validFrom: block });
  }

  remove(key: Hex, block: number): void {
    const record = this.#byKey.get(key);
    if (record) close(record, block);
  }
}

function close(record: DbRecord, block: number): void {
  const last = record.versions.at(-1);
  if (last && last.validTo === undefined) last.validTo = block;
}

/** The version of a record visible as of `block` when it is live then. */
export function versionAt(record: DbRecord, block: number): DbEntity | undefined {
  for (let i = record.versions.length - 1; i >= 0; i--) {
    const version = record.versions[i];
    if (version === undefined || version.validFrom > block) continue;
    if (version.validTo !== undefined && version.validTo <= block) return undefined;
    return isLive(version.entity, block) ? version.entity : undefined;
  }
  return undefined;
}
