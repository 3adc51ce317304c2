// Applies one block's entity operations to the tracked-entity table, following the node's metadata
// rules (reference/arkiv-client.md §3.3): updates keep creator and creation position, extends and owner
// changes keep lastModifiedAtBlock. Entities that are not arkivector entities are not kept.
import type { Address, Hex } from 'viem';
import type { EntityOp } from '../src/chain/blockOps.ts';
import type { CreateOp } from '../src/chain/storageTransaction.ts';
import { classify, type TrackedEntities, type TrackedEntity } from './trackedEntities.ts';

/** Creation facts of an entity the table did not track, read from the chain when an update makes it ours. */
export type CreationLookup = (
  key: Hex,
  block: number,
) => Promise<{ creator: Address | undefined; sequence: bigint } | undefined>;

/** Which collections this node indexes (undefined: all). */
export type CollectionFilter = ((name: string) => boolean) | undefined;

const sequenceOf = (block: number, txIndex: number, opIndex: number) =>
  (BigInt(block) << 32n) | (BigInt(txIndex) << 16n) | BigInt(opIndex);

function contentFields(content: CreateOp) {
  return {
    contentType: content.contentType,
    payload: content.payload,
    stringAttributes: new Map(content.stringAttributes.map((a) => [a.key, a.value])),
    numericAttributes: new Map(content.numericAttributes.map((a) => [a.key, a.value])),
  };
}

export async function applyOps(
  table: TrackedEntities,
  ops: readonly EntityOp[],
  block: number,
  lookup: CreationLookup,
  wanted: CollectionFilter,
): Promise<void> {
  const ours = (fields: ReturnType<typeof contentFields>) => {
    const kind = classify(fields.stringAttributes);
    return kind && (!wanted || wanted(kind.collection)) ? kind : undefined;
  };
  for (const op of ops) {
    const current = table.get(op.key);
    switch (op.type) {
      case 'expire':
      case 'delete':
        if (current) table.set(op.key, undefined);
        break;
      case 'create': {
        const fields = contentFields(op.content);
        const kind = ours(fields);
        if (!kind) break;
        table.set(op.key, {
          key: op.key,
          ...kind,
          ...fields,
          owner: op.owner,
          creator: op.owner,
          expiresAt: op.expiresAt,
          lastModifiedAtBlock: block,
          sequence: sequenceOf(block, op.txIndex, op.opIndex),
        });
        break;
      }
      case 'update': {
        const fields = contentFields(op.content);
        const kind = ours(fields);
        if (!kind) {
          if (current) table.set(op.key, undefined);
          break;
        }
        const creation = current ?? (await lookup(op.key, block));
        table.set(op.key, {
          key: op.key,
          ...kind,
          ...fields,
          owner: op.owner,
          creator: creation?.creator,
          expiresAt: op.expiresAt,
          lastModifiedAtBlock: block,
          sequence: creation?.sequence ?? sequenceOf(block, op.txIndex, op.opIndex),
        });
        break;
      }
      case 'extend':
        if (current) table.set(op.key, { ...current, expiresAt: op.expiresAt } satisfies TrackedEntity);
        break;
      case 'changeOwner':
        if (current) table.set(op.key, { ...current, owner: op.newOwner } satisfies TrackedEntity);
        break;
    }
  }
}
