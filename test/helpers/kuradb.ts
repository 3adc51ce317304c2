// The KuraDB-style database of the --compat kuradb suites: chunks with `source` and `chunk` attributes in
// the fake embedder's 4-d space (cats near [1,0,0,0], plants near the fern), one chunk without a source,
// and one without content right next to the cats (it must never be answered).
import type { CollectionDefinition } from '../../src/collections/index.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import { walletClient } from './devnet.ts';
import { definitionArgs, vectorArgs } from './writes.ts';

export const kb: CollectionDefinition = {
  dim: 4,
  metric: 'cosine',
  open: false,
  writers: [],
  index: { m: 16, ef_construction: 64, ef_search: 40 },
  attributes: { source: 'str', chunk: 'i32' },
};

export const chunks = [
  {
    id: 'c1',
    vector: [1, 0, 0, 0],
    document: 'Cats purr when content.',
    attributes: { source: '/notes/cats.md', chunk: 1 },
  },
  {
    id: 'c2',
    vector: [0.9, 0.1, 0, 0],
    document: 'A cat sleeps most of the day.',
    attributes: { source: '/notes/cats.md', chunk: 2 },
  },
  {
    id: 'f1',
    vector: [0, 0.1, 1, 0.2],
    document: 'Ferns grow in shade.',
    attributes: { source: '/notes/ferns.md', chunk: 0 },
  },
  { id: 'loose', vector: [0.5, 0.5, 0.5, 0.5], document: 'A note without a source about cats.' },
  // Nearer to "cats" than c2, but nothing to show.
  { id: 'blank', vector: [1, 0.01, 0, 0], document: '', attributes: { source: '/notes/cats.md', chunk: 3 } },
];

/** Writes the database `agenvoy` (its definition, then every chunk) with the devnet's first account. */
export async function writeAgenvoyDb(devnet: Devnet): Promise<void> {
  const alice = walletClient(devnet);
  await alice.createEntity(definitionArgs('agenvoy', kb));
  await alice.mutateEntities({ creates: chunks.map((c) => vectorArgs('agenvoy', c, kb)) });
}
