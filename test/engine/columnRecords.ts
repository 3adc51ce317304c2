// Records whose fields test every way the store's record columns keep them (recordColumns.ts,
// attributeColumns.ts): keys in and out of the lowercase key form, owners and creators that differ in
// case only, ids with non-ASCII text, expiries outside uint64, attributes undeclared, of another type
// than their column, booleans, ±Infinity and `__proto__`. test/engine/fixtures/snapshot-main-caa7a0d
// holds them as the store wrote them before its records became columns (caa7a0d), in two blocks, two
// of them removed.
import type { AttributeValue, VectorRecord } from '../../src/collections/index.ts';
import { definition, keyOf, makeRecord } from './helpers.ts';

export const COLUMN_DIM = 6;
export const columnDefinition = () => definition(COLUMN_DIM, { n: 'i32', tag: 'str', f: 'f32', ok: 'bool' });

export const columnVector = (i: number): number[] =>
  Array.from({ length: COLUMN_DIM }, (_, j) => Math.cos(i * 0.9 + j * 1.1));

const OWNERS = ['0x00000000000000000000000000000000000000aa', '0x00000000000000000000000000000000000000AA', '0xbeef'];

function attributesOf(i: number): Record<string, AttributeValue> {
  const a: Record<string, AttributeValue> = Object.create(null);
  if (i % 5 === 0) return a;
  a.n = i % 7 === 0 ? 'seven' : i;
  if (i % 2 === 0) a.tag = `t${i % 3}`;
  a.f = i === 4 ? Number.POSITIVE_INFINITY : i === 8 ? Number.NEGATIVE_INFINITY : i / 8;
  if (i % 3 === 0) a.ok = i % 2 === 0;
  if (i % 4 === 1) a.extra = i % 8 === 1 ? `x${i}` : i % 8 === 5;
  // An own property, as decoders make it (no prototype: no setter).
  if (i === 9)
    Object.defineProperty(a, '__proto__', { value: 'proto', enumerable: true, writable: true, configurable: true });
  if (i === 13) a.tag = 13;
  return a;
}

/** 24 records, each field varied as the header says. */
export function columnRecords(): VectorRecord[] {
  return Array.from({ length: 24 }, (_, i) => {
    const key = i === 3 ? `0x${'AbCdEf01'.repeat(8)}` : i === 10 ? `plain-key-${i}` : i === 11 ? 'K' : keyOf(i);
    const rec = makeRecord(i, columnVector(i), attributesOf(i), {
      key,
      id: i === 7 ? `é-${i}` : i === 12 ? '' : `id-${i}`,
      owner: OWNERS[i % 3],
      document: i % 4 === 0 ? `doc ${i} cats` : '',
    });
    rec.creator = i % 2 === 0 ? undefined : OWNERS[(i + 1) % 3];
    rec.expiresAt = i === 5 ? 1n << 70n : i === 6 ? -3n : BigInt(1000 + (i % 3));
    return rec;
  });
}

/** The records removed by key after the first block (their slots are free in the snapshot). */
export const COLUMN_REMOVED = [2, 15];
/** The first block: records 0–15; the second: the rest. */
export const COLUMN_FIRST_BLOCK = 16;
