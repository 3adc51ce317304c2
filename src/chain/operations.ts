// The entity operations every chain driver speaks, in both directions: what a writer is asked to do
// (a batch of creates, updates, deletes, extends and owner changes) and what a block did (the same
// operations, plus expiries, with their keys and positions). Nothing here is tied to one protocol's wire
// format; a driver maps these to and from its own encoding (ARCHITECTURE.md §7, "Adding a chain driver").
import type { Address, Hex } from 'viem';

export interface StringAttribute {
  key: string;
  value: string;
}
export interface NumericAttribute {
  key: string;
  value: bigint;
  /**
   * The schema type the value encodes (`src/collections` attributes), for a chain with typed cells: the
   * DB-chain writes `i32` as i32, `bool` as bool, `uint`/`f32`/absent as u64 (ARCHITECTURE.md §8.3).
   */
  type?: 'i32' | 'uint' | 'f32' | 'bool';
}

/**
 * A `btl` asking for an entity that lives until it is deleted: the DB-chain's permanent `expiresAt`
 * (2^64−1). A generation without permanent entities writes its longest lifetime instead (v1:
 * `V1_UNTIL_DELETED_BTL`).
 */
export const PERMANENT_BTL = (1n << 64n) - 1n;

/** The content of an entity as written: payload, content type, attributes and lifetime. */
export interface CreateOp {
  /** Blocks to live from the block that applies the operation; PERMANENT_BTL: until deleted. */
  btl: bigint;
  contentType: string;
  payload: Uint8Array;
  stringAttributes: StringAttribute[];
  numericAttributes: NumericAttribute[];
}
/** Replaces the whole content of an entity the signer owns. */
export interface UpdateOp extends CreateOp {
  entityKey: Hex;
}
export interface ExtendOp {
  entityKey: Hex;
  /** Blocks added to the entity's lifetime. */
  numberOfBlocks: bigint;
}
export interface ChangeOwnerOp {
  entityKey: Hex;
  newOwner: Address;
}

/**
 * One atomic write: all of it applies in one block, or none of it. A driver applies the lists in this
 * order (creates, updates, deletes, extends, owner changes); the i-th create's key is `keys[i]` of the
 * writer's answer.
 */
export interface EntityBatch {
  creates: CreateOp[];
  updates: UpdateOp[];
  deletes: Hex[];
  extends: ExtendOp[];
  ownerChanges: ChangeOwnerOp[];
}

export const emptyBatch = (): EntityBatch => ({
  creates: [],
  updates: [],
  deletes: [],
  extends: [],
  ownerChanges: [],
});

/**
 * The most operations the service puts in one batch (Arkiv v1's node cap). Batches are atomic, so every
 * driver must accept this many in one transaction.
 */
export const MAX_BATCH_OPERATIONS = 1000;

/** Operations in one batch. */
export const batchSize = (batch: EntityBatch): number =>
  batch.creates.length + batch.updates.length + batch.deletes.length + batch.extends.length + batch.ownerChanges.length;

/** Where an operation sits in its block: transaction index, then index among its kind in the transaction. */
export interface OpPosition {
  txIndex: number;
  opIndex: number;
}

/**
 * What a block did to one entity, in chain order. `expire` ops come first in a block (the entity's
 * lifetime ended at this block; the indexer also ends every entity whose expiry is the block, so a chain
 * without expiry events yields none); `create` and `update` carry the full content after the operation.
 * `touches`: the chain stamps an extend or owner change as the entity's last modification (DB-chain).
 */
export type EntityOp =
  | { type: 'expire'; key: Hex }
  | ({ type: 'create'; key: Hex; owner: Address; expiresAt: bigint; content: CreateOp } & OpPosition)
  | ({ type: 'delete'; key: Hex } & OpPosition)
  | ({ type: 'update'; key: Hex; owner: Address; expiresAt: bigint; content: CreateOp } & OpPosition)
  | ({ type: 'extend'; key: Hex; expiresAt: bigint; touches?: true } & OpPosition)
  | ({ type: 'changeOwner'; key: Hex; newOwner: Address; touches?: true } & OpPosition);
