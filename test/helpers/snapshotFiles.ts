// Snapshot files as an older node left them: tests rewrite a format field and expect the node to refuse the file.
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';

/**
 * Rewrites the `format` of the JSON file at `path` (a snapshot's meta.json or a store's store.json) from
 * `current`, which it must hold, to `older`.
 */
export async function rewriteFormat(path: string, current: number, older: number): Promise<void> {
  const manifest = JSON.parse(await readFile(path, 'utf8')) as { format: number };
  assert.equal(manifest.format, current);
  await writeFile(path, JSON.stringify({ ...manifest, format: older }));
}
