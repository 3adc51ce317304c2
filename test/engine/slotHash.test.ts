// The id → slot table of a collection store (src/engine/slotHash.ts) against a Map: the same answers
// for any sequence of sets and deletes, through its growth and its deleted entries.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { SlotHash } from '../../src/engine/slotHash.ts';

type Op = { set: boolean; key: string; slot: number };

describe('SlotHash', () => {
  test('answers as a Map of the same sets and deletes', () => {
    // Few distinct keys and slots, so sequences replace, delete and re-add the same entries.
    const key = fc.constantFrom('a', 'b', 'id-1', 'id-2', '0', '00', 'é', '東京', 'x'.repeat(40));
    const op = fc.record({ set: fc.boolean(), key: fc.oneof(key, fc.string()), slot: fc.integer({ min: 0, max: 40 }) });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 300 }), (ops: Op[]) => {
        // The store's rule: a slot holds one record, so one key; the table reads it back.
        const keyOfSlot = new Map<number, string>();
        const model = new Map<string, number>();
        const hash = new SlotHash((slot) => keyOfSlot.get(slot)!);
        for (const { set, key, slot } of ops) {
          if (set) {
            // Setting a slot that holds another key first removes that key, as the store does.
            const held = keyOfSlot.get(slot);
            if (held !== undefined) {
              if (model.get(held) === slot) model.delete(held);
              hash.delete(held, slot);
            }
            // A key set under another slot is deleted first (the store removes that slot's record).
            const prev = model.get(key);
            if (prev !== undefined) {
              hash.delete(key, prev);
              keyOfSlot.delete(prev);
            }
            keyOfSlot.set(slot, key);
            model.set(key, slot);
            hash.set(key, slot);
          } else {
            // Deleted while the slot still reads its key, as the store does.
            hash.delete(key, slot);
            if (model.get(key) === slot) {
              model.delete(key);
              keyOfSlot.delete(slot);
            }
          }
          assert.equal(hash.size, model.size);
        }
        for (const [k, s] of model) assert.equal(hash.get(k), s);
        for (const { key } of ops) assert.equal(hash.get(key), model.get(key));
      }),
      { numRuns: 1000 },
    );
  });

  test('holds 20,000 ids in at most 12 bytes each, and finds each', () => {
    const ids = Array.from({ length: 20_000 }, (_, i) => `id-${i}`);
    const hash = new SlotHash((slot) => ids[slot]!);
    for (let i = 0; i < ids.length; i++) hash.set(ids[i]!, i);
    // Deleting and re-adding leaves deleted entries behind that the growth rehashes away.
    for (let round = 0; round < 3; round++)
      for (let i = 0; i < ids.length; i += 3) {
        hash.delete(ids[i]!, i);
        hash.set(ids[i]!, i);
      }
    assert.equal(hash.size, ids.length);
    for (let i = 0; i < ids.length; i++) assert.equal(hash.get(ids[i]!), i);
    assert.equal(hash.get('id-20000'), undefined);
    assert.ok(hash.tableBytes <= 12 * ids.length, `${hash.tableBytes} bytes for ${ids.length} ids`);
  });
});
