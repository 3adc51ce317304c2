// The tracked-entity table's journal: rolling back whole blocks and aborting a half-applied one restore
// exactly the earlier entities and report each change to the listener (which keeps the resolver in step).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { Hex } from 'viem';
import { TrackedEntities, type TrackedEntity } from '../../indexer/trackedEntities.ts';

const entity = (key: Hex, version: number): TrackedEntity => ({
  key,
  kind: 'vector',
  collection: 'c',
  id: '',
  owner: '0x0000000000000000000000000000000000000001',
  creator: undefined,
  expiresAt: 100n,
  lastModifiedAtBlock: version,
  sequence: 0n,
  oversize: undefined,
  revision: version,
  content: undefined,
  verdict: undefined,
});

const snapshot = (table: TrackedEntities) => new Map([...table.values()].map((e) => [e.key, e.lastModifiedAtBlock]));

test('journal: random blocks of sets and deletes roll back exactly, and an aborted block leaves no trace', () => {
  const keys = ['0x01', '0x02', '0x03', '0x04'] as Hex[];
  const op = fc.record({
    key: fc.constantFrom(...keys),
    version: fc.option(fc.integer({ min: 1, max: 250 }), { nil: undefined }),
  });
  fc.assert(
    fc.property(
      fc.array(fc.array(op, { maxLength: 6 }), { minLength: 1, maxLength: 8 }),
      fc.array(op, { minLength: 1, maxLength: 6 }),
      fc.nat(),
      (blocks, partial, cut) => {
        const mirror = new Map<Hex, number | undefined>();
        const table = new TrackedEntities((previous, next) => {
          if (next) mirror.set(next.key, next.lastModifiedAtBlock);
          else if (previous) mirror.delete(previous.key);
        });
        const states: Map<Hex, number | undefined>[] = [snapshot(table)];
        blocks.forEach((ops, i) => {
          table.beginBlock(i + 1);
          for (const { key, version } of ops) table.set(key, version === undefined ? undefined : entity(key, version));
          table.endBlock();
          states.push(snapshot(table));
        });
        table.beginBlock(blocks.length + 1);
        for (const { key, version } of partial)
          table.set(key, version === undefined ? undefined : entity(key, version));
        table.abortBlock();
        assert.deepEqual(snapshot(table), states[blocks.length], 'abortBlock restores the last complete block');
        const target = cut % (blocks.length + 1);
        assert.ok(table.canRollBackTo(target));
        table.rollBackTo(target);
        assert.deepEqual(snapshot(table), states[target]);
        assert.deepEqual(mirror, states[target], 'the listener saw every change');
      },
    ),
  );
});
