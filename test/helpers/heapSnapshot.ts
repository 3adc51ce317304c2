// Reads a V8 heap snapshot of this process: every live object with its type, name and own size, for the
// memory tests that count what a store keeps (test/engine/storeMemory.test.ts, test/engine/collectionCost.test.ts)
// (heap snapshots the benches write are opened in Chrome DevTools instead). A snapshot holds live objects only.

import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString, writeHeapSnapshot } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
/** A full collection: the snapshot V8 writes may still hold what the last one read. */
const gc = runInNewContext('gc') as () => void;

/** One object of a heap snapshot: its kind (`object`, `string`, `array`…), its name and own bytes. */
export type HeapNode = { type: string; name: string; selfSize: number };

/** The live objects of this process's heap now (one snapshot written to a temporary directory). */
export async function heapNodes(): Promise<HeapNode[]> {
  const dir = await mkdtemp(join(tmpdir(), 'arkivector-heap-'));
  try {
    gc();
    const file = writeHeapSnapshot(join(dir, 'heap.heapsnapshot'));
    const snapshot = JSON.parse(await readFile(file, 'utf8')) as {
      snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
      nodes: number[];
      strings: string[];
    };
    const fields = snapshot.snapshot.meta.node_fields;
    const typeNames = snapshot.snapshot.meta.node_types[0];
    const width = fields.length;
    const typeAt = fields.indexOf('type');
    const nameAt = fields.indexOf('name');
    const sizeAt = fields.indexOf('self_size');
    const out: HeapNode[] = [];
    const { nodes, strings } = snapshot;
    for (let i = 0; i < nodes.length; i += width)
      out.push({
        type: typeNames[nodes[i + typeAt] ?? -1] ?? '',
        name: strings[nodes[i + nameAt] ?? -1] ?? '',
        selfSize: nodes[i + sizeAt] ?? 0,
      });
    return out;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Bytes per group of live objects: strings grouped by form (an entity key, a decimal number, other),
 * objects by constructor name, the rest by type (one group per function or code name would make the
 * groups themselves a good part of the next snapshot).
 */
export function heapByGroup(nodes: readonly HeapNode[]): Map<string, { count: number; bytes: number }> {
  const groups = new Map<string, { count: number; bytes: number }>();
  for (const n of nodes) {
    const group =
      n.type === 'string' || n.type === 'concatenated string' || n.type === 'sliced string'
        ? `string ${/^0x[0-9a-fA-F]{64}$/.test(n.name) ? 'key' : /^\d+$/.test(n.name) ? 'digits' : 'other'}`
        : n.type === 'object' || n.type === 'native'
          ? `${n.type} ${n.name}`
          : n.type;
    const g = groups.get(group) ?? { count: 0, bytes: 0 };
    g.count++;
    g.bytes += n.selfSize;
    groups.set(group, g);
  }
  return groups;
}
