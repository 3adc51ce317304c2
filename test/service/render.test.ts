// typedAttributes (src/service/render.ts) renders every search, get and listing answer's attributes: in
// name order, only those the collection defines, with their declared type. It sorts each definition's
// attributes once (cached per definition object), so a changed definition must be seen at once.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CollectionDefinition } from '../../src/collections/index.ts';
import { typedAttributes } from '../../src/service/render.ts';

function definition(attributes: CollectionDefinition['attributes']): CollectionDefinition {
  return {
    dim: 4,
    metric: 'cosine',
    attributes,
    open: true,
    writers: [],
    index: { m: 16, ef_construction: 64, ef_search: 40 },
  };
}

function record(attributes: Record<string, string | number | boolean>) {
  return {
    key: `0x${'1'.repeat(64)}`,
    owner: `0x${'a'.repeat(40)}`,
    creator: undefined,
    collection: 'c',
    id: 'one',
    expiresAt: 100n,
    dim: 4,
    document: '',
    attributes,
  };
}

describe('typedAttributes', () => {
  test('behavior: defined attributes in name order with their type; undefined ones left out', () => {
    const def = definition({ zeta: 'i32', alpha: 'str', mid: 'bool', unused: 'f32' });
    const out = typedAttributes(record({ mid: true, zeta: 7, extra: 'x', alpha: 'a' }), def);
    assert.deepEqual(Object.keys(out), ['alpha', 'mid', 'zeta']);
    assert.deepEqual(out, {
      alpha: { type: 'str', value: 'a' },
      mid: { type: 'bool', value: true },
      zeta: { type: 'i32', value: 7 },
    });
  });

  test('behavior: a defined attribute the record lacks is absent, also when its name is an Object member', () => {
    const def = definition(
      Object.fromEntries([
        ['constructor', 'str'],
        ['toString', 'str'],
        ['n', 'i32'],
      ]) as CollectionDefinition['attributes'],
    );
    assert.deepEqual(typedAttributes(record({ n: 1 }), def), { n: { type: 'i32', value: 1 } });
    assert.deepEqual(typedAttributes(record({ constructor: 'c' }), def), { constructor: { type: 'str', value: 'c' } });
  });

  test('behavior: a new definition (an added attribute) is rendered at once, the old one still as it was', () => {
    const old = definition({ a: 'i32' });
    const rec = record({ a: 1, b: 'two' });
    assert.deepEqual(typedAttributes(rec, old), { a: { type: 'i32', value: 1 } });
    const next = definition({ a: 'i32', b: 'str' });
    assert.deepEqual(typedAttributes(rec, next), { a: { type: 'i32', value: 1 }, b: { type: 'str', value: 'two' } });
    assert.deepEqual(typedAttributes(rec, old), { a: { type: 'i32', value: 1 } });
  });
});
