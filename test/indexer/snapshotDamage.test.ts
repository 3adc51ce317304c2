// A damaged snapshot (truncated JSON, a damaged graph, bytes overwritten in a file that still parses, a file
// or a store folder missing) is refused and the node rebuilds from the chain, never a retry loop nor a
// snapshot served with wrong answers; staging folders left by killed processes are removed at start.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { cp, mkdir, mkdtemp, open, readFile, readdir, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createHttpTransport, type RpcTransport } from '../../src/chain/index.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import { startTestDevnet, walletClient } from '../helpers/devnet.ts';
import { assertRebuiltFromChain } from '../helpers/indexerOracle.ts';
import { toOldEngineSnapshot } from '../helpers/engineEnv.ts';
import { suiteIndexers } from '../helpers/indexers.ts';
import { definitionArgs, openDefinition, vectorArgs } from '../helpers/writes.ts';

const notes = openDefinition({ topic: 'str' });
const store = (...parts: string[]) => join('snapshot', 'stores', '0', ...parts);

const halve = (path: string) => async (dir: string) => {
  const { size } = await stat(join(dir, path));
  await truncate(join(dir, path), Math.floor(size / 2));
};
const overwrite = (path: string, at: number, bytes: number) => async (dir: string) => {
  const file = await open(join(dir, path), 'r+');
  try {
    await file.write(Buffer.alloc(bytes, 0x5a), 0, bytes, at);
  } finally {
    await file.close();
  }
};
const remove = (path: string) => (dir: string) => rm(join(dir, path), { recursive: true, force: false });

/** Every damage a snapshot must be refused for; the node must then rebuild from the chain. */
const damages: [string, (dir: string) => Promise<void>][] = [
  ['meta.json truncated', halve('snapshot/meta.json')],
  ['entities.json truncated', halve('snapshot/entities.json')],
  ['store.json truncated', halve(store('store.json'))],
  ['records.json truncated', halve(store('records.json'))],
  ['keyword.json truncated', halve(store('keyword.json'))],
  ['hnsw.bin damaged', overwrite(store('hnsw.bin'), 0, 64)],
  ['hnsw.bin truncated', halve(store('hnsw.bin'))],
  ['halfvec.bin overwritten, same size', overwrite(store('halfvec.bin'), 8, 16)],
  [
    'two ids swapped in records.json (still parses)',
    async (dir) => {
      const path = join(dir, store('records.json'));
      const tuples = JSON.parse(await readFile(path, 'utf8')) as unknown[][];
      const [a, b] = [tuples[0]!, tuples[1]!];
      [a[5], b[5]] = [b[5], a[5]];
      await writeFile(path, JSON.stringify(tuples));
    },
  ],
  ['invnorms.bin missing', remove(store('invnorms.bin'))],
  ['keyword.json missing', remove(store('keyword.json'))],
  ['entities.json missing', remove('snapshot/entities.json')],
  ['the store folder missing', remove(store())],
  [
    'meta.json edited (block number)',
    async (dir) => {
      const path = join(dir, 'snapshot', 'meta.json');
      const meta = JSON.parse(await readFile(path, 'utf8')) as { collections: string[] };
      await writeFile(path, JSON.stringify({ ...meta, collections: [...meta.collections, 'other'] }));
    },
  ],
];

describe('indexer: damaged snapshots', () => {
  // The damages name the retired hnswlib-node engine's store files (halfvec.bin, invnorms.bin beside the
  // graph): the pristine snapshot is rewritten into that engine's, which a node converts on load.
  let devnet: Devnet;
  let transport: RpcTransport;
  let pristine: string;
  const suite = suiteIndexers(() => devnet, 20_000);

  before(async () => {
    devnet = await startTestDevnet();
    transport = createHttpTransport({ url: devnet.url, attempts: 2, backoffMs: 20 });
    const alice = walletClient(devnet, 0);
    await alice.createEntity(definitionArgs('notes', notes));
    await alice.mutateEntities({
      creates: Array.from({ length: 12 }, (_, i) =>
        vectorArgs(
          'notes',
          {
            id: `n${i}`,
            vector: Array.from({ length: notes.dim }, (_, j) => Math.sin(i + j)),
            document: `doc ${i}`,
            attributes: { topic: `t${i % 3}` },
          },
          notes,
        ),
      ),
    });
    pristine = await mkdtemp(join(tmpdir(), 'arkivector-snap-'));
    const first = suite.create(transport, { dataDir: pristine });
    await suite.synced(first);
    await first.stop();
    assert.equal(first.counters.snapshotsWritten, 1);
    await toOldEngineSnapshot(pristine, () => notes);
  });
  after(async () => {
    await suite.stopAll();
    await transport.close();
    await devnet.stop();
    await rm(pristine, { recursive: true, force: true });
  });

  test('an intact copy is loaded (the control)', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'arkivector-snap-'));
    try {
      await cp(pristine, dataDir, { recursive: true });
      const indexer = suite.create(transport, { dataDir });
      await suite.synced(indexer);
      assert.equal(indexer.counters.snapshotsLoaded, 1);
      assert.equal(indexer.counters.bootstraps, 0);
      await indexer.stop();
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  for (const [what, damage] of damages) {
    test(`refused and rebuilt from the chain: ${what}`, async () => {
      const dataDir = await mkdtemp(join(tmpdir(), 'arkivector-snap-'));
      try {
        await cp(pristine, dataDir, { recursive: true });
        await damage(dataDir);
        const indexer = suite.create(transport, { dataDir, snapshotEveryBlocks: 1_000_000 });
        await suite.synced(indexer);
        await assertRebuiltFromChain(devnet, indexer);
        await indexer.stop();
      } finally {
        await rm(dataDir, { recursive: true, force: true });
      }
    });
  }

  test('staging folders of dead processes are removed at start, a live process keeps its own', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'arkivector-snap-'));
    try {
      await cp(pristine, dataDir, { recursive: true });
      const child = spawn(process.execPath, ['-e', '']);
      const [code] = await once(child, 'exit');
      assert.equal(code, 0);
      const dead = `snapshot.tmp-${child.pid}`;
      const alive = `snapshot.tmp-${process.ppid}`;
      for (const name of [dead, alive]) {
        await mkdir(join(dataDir, name, 'stores', '0'), { recursive: true });
        await writeFile(join(dataDir, name, 'entities.json'), '{');
      }
      const indexer = suite.create(transport, { dataDir });
      await suite.synced(indexer);
      assert.equal(indexer.counters.snapshotsLoaded, 1);
      const left = (await readdir(dataDir)).sort();
      assert.ok(!left.includes(dead), `${dead} removed: ${left.join(', ')}`);
      assert.ok(left.includes(alive), 'the staging folder of a live process is kept');
      await indexer.stop();
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
