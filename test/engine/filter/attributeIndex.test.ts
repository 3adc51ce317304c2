// AttributeIndex against a naive model (a Set of slots per key) under the changes AttributeColumns
// makes (a slot gets a key, changes it, loses it; stray removes and repeated adds): the compact postings
// (a bare slot until a key's second one, then a bag) must answer every question the planner asks as Sets would.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { AttributeIndex, compareKeys, prefixRange } from '../../../src/engine/filter/attributeIndex.ts';
import type { Key } from '../../../src/engine/filter/types.ts';

/** What AttributeColumns does to a slot: give it a key (replacing its old one), or clear it. */
type Op = { slot: number; key: Key | undefined };

class Model {
  readonly postings = new Map<Key, Set<number>>();
  add(key: Key, slot: number): void {
    let set = this.postings.get(key);
    if (set === undefined) this.postings.set(key, (set = new Set()));
    set.add(slot);
  }
  remove(key: Key, slot: number): void {
    const set = this.postings.get(key);
    if (set === undefined) return;
    set.delete(slot);
    if (set.size === 0) this.postings.delete(key);
  }
  get total(): number {
    let n = 0;
    for (const set of this.postings.values()) n += set.size;
    return n;
  }
  slots(accept: (key: Key) => boolean): number[] {
    const out: number[] = [];
    for (const [key, set] of this.postings) if (accept(key)) out.push(...set);
    return out.sort((a, b) => a - b);
  }
}

const ascending = (a: number[]) => a.sort((x, y) => x - y);

// Few keys and slots, so keys often gain a second slot and lose it again.
const strKey = fc.constantFrom('a', 'ab', 'abc', 'b', 'ba', 'é', 'Z', '');
const numKey = fc.integer({ min: -3, max: 3 });
const opsOf = (key: fc.Arbitrary<Key>) =>
  fc.array(fc.record({ slot: fc.integer({ min: 0, max: 9 }), key: fc.option(key, { nil: undefined }) }), {
    maxLength: 200,
  });

/** `keyed`: the index reads each slot's key back (as `$key`'s reads its column), so keeps no Map entry for single slots. */
function check(ops: Op[], probes: Key[], prefixes: string[], keyed = false): void {
  const current = new Map<number, Key>();
  const idx = keyed ? new AttributeIndex((slot) => current.get(slot) as string) : new AttributeIndex();
  const model = new Model();
  for (const { slot, key } of ops) {
    const old = current.get(slot);
    // A remove of a key the slot does not hold, and a repeated add, change nothing.
    for (const stray of probes) if (stray !== old) idx.remove(stray, slot);
    if (old !== undefined && old === key) idx.add(key, slot);
    if (old !== undefined && old !== key) {
      idx.remove(old, slot);
      model.remove(old, slot);
      current.delete(slot);
    }
    if (key !== undefined && old !== key) {
      // The slot holds its key before it is indexed, as AttributeColumns writes a column before indexSlot.
      current.set(slot, key);
      idx.add(key, slot);
      model.add(key, slot);
    }
    assert.equal(idx.total, model.total);
  }
  const keys = [...model.postings.keys()].sort(compareKeys);
  assert.deepEqual(idx.sortedKeys(), keys);
  for (const key of [...keys, ...probes]) {
    const set = model.postings.get(key);
    assert.equal(idx.countEq(key), set?.size ?? 0);
    assert.equal(idx.only(key), set?.size === 1 ? [...set][0] : undefined);
    const out: number[] = [];
    idx.pushSlots(key, out);
    assert.deepEqual(
      ascending(out),
      model.slots((k) => k === key),
    );
    const notKey: number[] = [];
    idx.pushSlotsWhere((k) => k !== key, notKey);
    assert.deepEqual(
      ascending(notKey),
      model.slots((k) => k !== key),
    );
    for (const strict of [false, true]) {
      const b = idx.bound(key, strict);
      const expected = keys.findIndex((k) => (strict ? compareKeys(k, key) > 0 : compareKeys(k, key) >= 0));
      assert.equal(b, expected === -1 ? keys.length : expected);
      // Every range count is the sum of the keys' posting sizes.
      let below = 0;
      for (const k of keys.slice(0, b)) below += model.postings.get(k)!.size;
      assert.equal(idx.countRange(0, b), below);
      assert.equal(idx.countRange(b, keys.length), model.total - below);
    }
  }
  for (const prefix of prefixes) {
    const [from, to] = prefixRange(idx, prefix);
    const starting = keys.filter((k) => String(k).startsWith(prefix));
    assert.deepEqual(idx.sortedKeys().slice(from, to), starting);
  }
}

describe('AttributeIndex', () => {
  test('property: string keys answer as a Set per key would under adds and removes', () => {
    fc.assert(
      fc.property(opsOf(strKey), fc.array(strKey, { maxLength: 4 }), fc.array(strKey, { maxLength: 4 }), (o, p, x) =>
        check(o, p, x),
      ),
      { numRuns: 300 },
    );
  });

  test('property: string keys read back from their slots answer the same (the `$key` index)', () => {
    fc.assert(
      fc.property(opsOf(strKey), fc.array(strKey, { maxLength: 4 }), fc.array(strKey, { maxLength: 4 }), (o, p, x) =>
        check(o, p, x, true),
      ),
      { numRuns: 300 },
    );
  });

  test('property: numeric keys answer as a Set per key would under adds and removes', () => {
    fc.assert(
      fc.property(opsOf(numKey), fc.array(numKey, { maxLength: 4 }), (ops, probes) => check(ops, probes, [])),
      { numRuns: 300 },
    );
  });

  test('behavior: bags grow and shrink past their initial size, keeping every slot', () => {
    const idx = new AttributeIndex();
    for (let s = 0; s < 100; s++) idx.add(s % 2, s);
    for (let s = 0; s < 100; s += 3) idx.remove(s % 2, s);
    const out: number[] = [];
    idx.pushSlots(0, out);
    assert.deepEqual(
      ascending(out),
      Array.from({ length: 100 }, (_, s) => s).filter((s) => s % 2 === 0 && s % 3 !== 0),
    );
    assert.equal(idx.countEq(1), 33);
  });

  test('behavior: a key back to one slot answers `only` again; adding a slot twice counts it once', () => {
    const idx = new AttributeIndex();
    idx.add('k', 1);
    idx.add('k', 1);
    assert.equal(idx.total, 1);
    idx.add('k', 2);
    assert.equal(idx.only('k'), undefined);
    assert.equal(idx.countEq('k'), 2);
    idx.remove('k', 1);
    assert.equal(idx.only('k'), 2);
    idx.remove('k', 3);
    assert.equal(idx.total, 1);
    idx.remove('k', 2);
    assert.deepEqual(idx.sortedKeys(), []);
    assert.equal(idx.total, 0);
  });
});
