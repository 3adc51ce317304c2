// Applies one block's entity operations to the tracked-entity table, following the node's metadata
// rules (reference/arkiv-client.md §3.3): updates keep creator and creation position, extends and owner
// changes keep lastModifiedAtBlock. Entities that are not arkivector entities are not kept, and neither
// are vectors of a name that has no definition: anyone can write those for free, so holding them would let
// a stranger fill every node's memory. When a name gains its first definition, its vectors are loaded from
// the chain at that block; when it loses its last one, they are dropped.
import type { Address, Hex } from 'viem';
import type { CreateOp, EntityOp } from '../src/chain/index.ts';
import { boundedEntity, classify, intern, type TrackedEntities, type TrackedEntity } from './trackedEntities.ts';

/** Creation facts of an entity the table did not track, read from the chain when an update makes it ours. */
export type CreationLookup = (
  key: Hex,
  block: number,
) => Promise<{ creator: Address | undefined; sequence: bigint } | undefined>;

/** The vector entities of `name` live at the end of `block`, read from the chain (already bounded). */
/** The vectors of these names at `block`, read together (the names that gained a definition in it). */
export type VectorLoader = (names: readonly string[], block: number) => Promise<TrackedEntity[]>;

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
  loadVectors: VectorLoader,
): Promise<void> {
  // name -> whether it had a definition before this block (only names whose definitions changed)
  const hadDefinition = new Map<string, boolean>();
  const set = (key: Hex, next: TrackedEntity | undefined) => {
    for (const entity of [table.get(key), next])
      if (entity?.kind === 'collection' && !hadDefinition.has(entity.collection))
        hadDefinition.set(entity.collection, table.definitionCount(entity.collection) > 0);
    table.set(key, next);
  };
  const ours = (fields: ReturnType<typeof contentFields>) => {
    const kind = classify(fields.stringAttributes);
    if (!kind || (wanted && !wanted(kind.collection))) return undefined;
    return kind.kind === 'collection' || table.definitionCount(kind.collection) > 0 ? kind : undefined;
  };
  // Every entity whose expiry is this block ends first, whether or not the chain says so: the DB-chain has
  // no expiry event, and v1's Expired logs then find nothing (ARCHITECTURE.md §7).
  for (const key of table.expiringAt(block)) set(key, undefined);
  for (const op of ops) {
    const current = table.get(op.key);
    switch (op.type) {
      case 'expire':
      case 'delete':
        if (current) set(op.key, undefined);
        break;
      case 'create':
      case 'update': {
        const fields = contentFields(op.content);
        const kind = ours(fields);
        if (!kind) {
          // An update that makes an entity not ours (or moves it to a name without a definition) drops it.
          if (op.type === 'update' && current) set(op.key, undefined);
          break;
        }
        const position = sequenceOf(block, op.txIndex, op.opIndex);
        // An update keeps the creator and the creation position, read from the chain when the table lacks them.
        const creation =
          op.type === 'create' ? { creator: op.owner, sequence: position } : (current ?? (await lookup(op.key, block)));
        set(
          op.key,
          boundedEntity({
            key: op.key,
            ...kind,
            ...fields,
            owner: op.owner,
            creator: creation?.creator,
            expiresAt: op.expiresAt,
            lastModifiedAtBlock: block,
            sequence: creation?.sequence ?? position,
          }),
        );
        break;
      }
      // Same content: the copy keeps the verdict (and the content while it is still held).
      // `touches`: the chain counts the op as a modification (the DB-chain's updatedAt), so it is one here too.
      case 'extend':
        if (current)
          set(op.key, {
            ...current,
            expiresAt: op.expiresAt,
            ...(op.touches ? { lastModifiedAtBlock: block } : {}),
          } satisfies TrackedEntity);
        break;
      case 'changeOwner':
        if (current)
          set(op.key, {
            ...current,
            owner: intern(op.newOwner),
            ...(op.touches ? { lastModifiedAtBlock: block } : {}),
          } satisfies TrackedEntity);
        break;
    }
  }
  const gained: string[] = [];
  for (const [name, had] of hadDefinition) {
    const has = table.definitionCount(name) > 0;
    if (had === has) continue;
    // Vectors written in this block before the definition were not kept: reload the whole name.
    for (const key of table.vectorKeys(name)) table.set(key, undefined);
    if (has) gained.push(name);
  }
  // One read for every name that gained a definition: a stranger's definitions cost no call each.
  if (gained.length) for (const entity of await loadVectors(gained, block)) table.set(entity.key, entity);
}
