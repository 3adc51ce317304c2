// The records of test/engine/fixtures/snapshot-44dab70 (a snapshot written by the store as it was at
// 44dab70, before records dropped their collection and dimension and the id and key maps became slot
// tables), made again here so the test compares what the snapshot loads with what went in.
import type { VectorRecord } from '../../src/collections/index.ts';
import { definition, makeRecord } from './helpers.ts';

export const SNAPSHOT_DIM = 8;
export const snapshotDefinition = () => definition(SNAPSHOT_DIM, { n: 'i32', tag: 'str', f: 'f32' });

export const vectorOf = (i: number): number[] =>
  Array.from({ length: SNAPSHOT_DIM }, (_, j) => Math.sin(i * 1.3 + j * 0.7));

/** 30 records: every third without attributes, f32 values of ±Infinity, documents on even ones. */
export function snapshotRecords(): VectorRecord[] {
  return Array.from({ length: 30 }, (_, i) =>
    makeRecord(
      i,
      vectorOf(i),
      i % 3 === 0 ? {} : { n: i, tag: `t${i % 4}`, f: i === 4 ? Number.POSITIVE_INFINITY : i / 8 },
      { document: i % 2 === 0 ? `doc ${i} cats` : '' },
    ),
  );
}

/** The keys removed after the first block (their slots are free in the snapshot). */
export const REMOVED = [5, 11];
