// The sync plan of one file against what the chain holds, and the naming of sources and ids.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { chunkText } from '../../src/ingest/chunk.ts';
import { chunkId, INGEST_REFRESH_BLOCKS, planFile, planRemoval } from '../../src/ingest/plan.ts';
import type { RemoteChunk } from '../../src/ingest/remote.ts';
import { walk } from '../../src/ingest/walk.ts';
import { defined } from '../helpers/defined.ts';

const FAR = 10_000_000;

function onChain(source: string, text: string, expiresAtBlock = FAR): RemoteChunk[] {
  return chunkText(text).map((c) => ({ id: chunkId(source, c.index), chunk: c.index, sha: c.sha, expiresAtBlock }));
}

describe('planFile', () => {
  const v1 = '# A\n\none\n\n# B\n\ntwo\n\n# C\n\nthree';
  test('an unchanged file plans nothing', () => {
    const plan = planFile('a.md', chunkText(v1), onChain('a.md', v1), 100);
    assert.deepEqual([plan.creates, plan.updates, plan.deletes, plan.unchanged], [[], [], [], 3]);
  });

  test('a changed file updates changed chunks and deletes the ones it no longer has, highest first', () => {
    const plan = planFile('a.md', chunkText('# A\n\none\n\n# B\n\nTWO'), onChain('a.md', v1), 100);
    assert.deepEqual(
      plan.updates.map((e) => e.id),
      ['a.md#1'],
    );
    assert.equal(defined(plan.updates[0], 'plan.updates[0]').document, '# B\n\nTWO');
    assert.deepEqual(plan.creates, []);
    assert.deepEqual(plan.deletes, ['a.md#2']);
    assert.equal(plan.unchanged, 1);
  });

  test('a new file creates every chunk with source, chunk and content_sha', () => {
    const plan = planFile('dir/b.md', chunkText(v1), [], 0);
    assert.deepEqual(plan.creates[2], {
      id: 'dir/b.md#2',
      document: '# C\n\nthree',
      attributes: { source: 'dir/b.md', chunk: 2, content_sha: defined(chunkText(v1)[2], 'chunkText(v1)[2]').sha },
    });
  });

  test('an unchanged chunk close to expiry is written again; a removed file deletes all, chunk 0 last', () => {
    const soon = onChain('a.md', v1, 100 + INGEST_REFRESH_BLOCKS - 1);
    assert.equal(planFile('a.md', chunkText(v1), soon, 100).updates.length, 3);
    assert.deepEqual(planRemoval('a.md', onChain('a.md', v1)).deletes, ['a.md#2', 'a.md#1', 'a.md#0']);
  });

  test('an entity of the source under a foreign id is replaced', () => {
    const remote = [
      { id: 'other', chunk: 0, sha: defined(chunkText(v1)[0], 'chunkText(v1)[0]').sha, expiresAtBlock: FAR },
    ];
    const plan = planFile('a.md', chunkText(v1).slice(0, 1), remote, 0);
    assert.deepEqual(
      plan.creates.map((e) => e.id),
      ['a.md#0'],
    );
    assert.deepEqual(plan.deletes, ['other']);
  });

  test('ids: readable while they fit in 256 bytes, hashed beyond, never of the key form', () => {
    assert.equal(chunkId('notes/a.md', 3), 'notes/a.md#3');
    const long = `${'d/'.repeat(200)}x.md`;
    assert.match(chunkId(long, 7), /^sha256:[0-9a-f]{64}#7$/);
    assert.doesNotMatch(chunkId('0x', 1), /^0x[0-9a-f]{64}$/);
  });
});

describe('walk', () => {
  test('sources are relative to each directory operand with / separators; hidden entries and links skipped', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'arkivector-walk-'));
    try {
      await mkdir(join(dir, 'docs/sub'), { recursive: true });
      await mkdir(join(dir, 'docs/.git'));
      await writeFile(join(dir, 'docs/a.md'), 'a');
      await writeFile(join(dir, 'docs/sub/b.txt'), 'b');
      await writeFile(join(dir, 'docs/.git/config'), 'c');
      await writeFile(join(dir, 'single.html'), 'x');
      await symlink(join(dir, 'docs'), join(dir, 'docs/sub/loop'));
      const walked = await walk([join(dir, 'docs'), join(dir, 'single.html')]);
      assert.deepEqual(
        walked.files.map((f) => f.source),
        ['a.md', 'sub/b.txt', 'single.html'],
      );
      const rooted = await walk([join(dir, 'docs/sub')], dir);
      assert.deepEqual(
        rooted.files.map((f) => f.source),
        ['docs/sub/b.txt'],
      );
      for (const f of [...walked.files, ...rooted.files]) assert.ok(!f.source.startsWith('/'));
      await assert.rejects(walk([join(dir, 'docs')], join(dir, 'docs/sub')), /not inside --root/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
