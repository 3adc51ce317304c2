// `npm run bench -- indexer --structures`: what each structure of a node keeps per entity, each built
// alone in this process from entities shaped as bench:soak writes them (dim 32, "entity N" documents, one
// entity a block, each expiring at a block of its own): the indexer's tracked-entity table (with its
// journal and expiry index), the resolver's id maps, the keyword index, and a collection store (records,
// columns, graph bookkeeping and its own keyword index). Bytes are V8's used heap after full collections,
// before and after building each, divided by the entities (a heap snapshot's self sizes leave out part
// of large hash tables).
import type { Hex } from 'viem';
import { decodeVectorPayload, encodeVectorPayload, VECTOR_CONTENT_TYPE } from '../../src/collections/index.ts';
import { engineStores } from '../../src/engine/storeFactory.ts';
import { KeywordIndex } from '../../src/engine/keyword.ts';
import { boundedEntity, TrackedEntities, type TrackedEntity } from '../../indexer/trackedEntities.ts';
import { VectorResolver } from '../../indexer/vectorResolver.ts';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export type StructuresResult = {
  entities: number;
  dim: number;
  /** Live heap bytes per entity of each structure. */
  bytes_per_entity: Record<string, number>;
};

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

async function liveBytes(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return process.memoryUsage().heapUsed;
}
const OWNER = '0x00000000000000000000000000000000000000aa';
/** A string decoded afresh, as a chain read gives one. */
const fresh = (s: string) => [...s].join('');

/**
 * Builds each structure alone over `n` entities and measures it.
 * @param n entities
 * @param dim their dimension
 */
export async function runStructuresBench(n: number, dim: number): Promise<StructuresResult> {
  const vector = (i: number) => Array.from({ length: dim }, (_, d) => Math.sin(i * 0.7 + d * 1.3));
  const documents = Array.from({ length: n }, (_, i) => `entity ${i}`);
  const out: Record<string, number> = {};
  await liveBytes();
  let mark = await liveBytes();
  const measure = async (name: string) => {
    const now = await liveBytes();
    out[name] = Math.round((now - mark) / n);
    mark = now;
  };
  const keys = Array.from({ length: n }, (_, i) => `0x${(i * 2654435761).toString(16).padStart(64, '0')}` as Hex);
  await measure('entity keys (shared by the table and the store)');
  const table = new TrackedEntities(() => {});
  const verdict = { decoding: {}, reason: undefined };
  for (let i = 0; i < n; i++) {
    table.beginBlock(1000 + i);
    const entity = boundedEntity({
      key: keys[i] as Hex,
      kind: fresh('vector') as 'vector',
      collection: fresh('soak'),
      owner: fresh(OWNER) as Hex,
      creator: fresh(OWNER) as Hex,
      expiresAt: BigInt(100_000 + i),
      lastModifiedAtBlock: 1000 + i,
      sequence: BigInt(1000 + i) << 32n,
      contentType: fresh(VECTOR_CONTENT_TYPE),
      payload: encodeVectorPayload({ vector: vector(i), document: documents[i] as string }),
      stringAttributes: new Map([
        [fresh('arkivector_type'), fresh('vector')],
        [fresh('arkivector_collection'), fresh('soak')],
        [fresh('arkivector_id'), `e${i}`],
      ]),
      numericAttributes: new Map(),
    });
    entity.verdict = verdict;
    table.set(entity.key, entity);
    table.endBlock();
    table.dropResolvedContent();
  }
  await measure('tracked entities (table, journal, expiry index; ids)');
  const ids = new VectorResolver(() => {}, undefined);
  const winners = new Map<string, TrackedEntity>();
  for (const entity of table.values()) {
    ids.index(entity, true);
    winners.set(entity.id, entity);
  }
  await measure("resolver's id maps (id → keys, id → winner)");
  const keyword = new KeywordIndex();
  for (let i = 0; i < n; i++) keyword.add(i, documents[i] as string);
  await measure('keyword index');
  const store = engineStores.create('soak', {
    dim,
    metric: 'cosine',
    attributes: {},
    open: true,
    writers: [],
    index: { m: 16, ef_construction: 64, ef_search: 40 },
  });
  let i = 0;
  for (const entity of table.values()) {
    const payload = decodeVectorPayload(encodeVectorPayload({ vector: vector(i), document: documents[i] as string }));
    const commit = await store.prepare({
      remove: [],
      upsert: [
        {
          key: entity.key,
          owner: entity.owner,
          creator: entity.creator,
          collection: entity.collection,
          id: entity.id,
          expiresAt: entity.expiresAt,
          dim,
          vector: payload.vector,
          halfvec: payload.halfvec,
          document: payload.document,
          attributes: Object.create(null),
        },
      ],
    });
    commit();
    i++;
  }
  await measure("collection store (records, columns, its keyword index; the vector's heap part)");
  if (table.size + winners.size + keyword.size + store.size !== 4 * n) throw new Error('a structure lost entities');
  return { entities: n, dim, bytes_per_entity: out };
}
