// Finds the files under the ingest paths and names each by its path relative to its root, with `/`
// separators: the `source` attribute, which must never reveal where the folder lives on this machine.
import { lstat, readdir } from 'node:fs/promises';
import { basename, join, relative, resolve, sep } from 'node:path';

/** Most files one ingest run looks at; more is refused before anything is read. */
export const INGEST_MAX_FILES = 100_000;
/** `source` is a string attribute, so at most 1024 bytes (ARCHITECTURE.md §8.2). */
const SOURCE_MAX_BYTES = 1024;

export interface FoundFile {
  path: string;
  source: string;
}

export interface Walked {
  files: FoundFile[];
  /** Paths not ingested, with a one-line reason. */
  skipped: { path: string; reason: string }[];
}

export class WalkError extends Error {
  override name = 'WalkError';
}

/**
 * A directory operand is its own root (sources are relative to it); a file operand is named by its base
 * name, unless `root` is given, which every operand must then lie in. Hidden entries (`.git`, `.DS_Store`)
 * are not entered; symbolic links are not followed, so a link cycle cannot loop.
 */
export async function walk(paths: readonly string[], root?: string): Promise<Walked> {
  const out: Walked = { files: [], skipped: [] };
  const bySource = new Map<string, string>();
  const rootDir = root === undefined ? undefined : resolve(root);
  const add = (path: string, source: string) => {
    if (out.files.length >= INGEST_MAX_FILES) throw new WalkError(`more than ${INGEST_MAX_FILES} files`);
    if (/[\p{Cc}]/u.test(source) || Buffer.byteLength(source, 'utf8') > SOURCE_MAX_BYTES) {
      out.skipped.push({ path, reason: 'its relative path has control characters or is over 1024 bytes' });
      return;
    }
    const other = bySource.get(source);
    if (other !== undefined && other !== path)
      throw new WalkError(`${path} and ${other} would both be source ${JSON.stringify(source)}: pass --root`);
    if (other === undefined) out.files.push({ path, source });
    bySource.set(source, path);
  };
  const visit = async (dir: string, base: string, depth: number): Promise<void> => {
    if (depth > 64) return;
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (error) {
      out.skipped.push({ path: dir, reason: `unreadable (${(error as NodeJS.ErrnoException).code})` });
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await visit(path, base, depth + 1);
      else if (entry.isFile()) add(path, toSource(relative(base, path)));
    }
  };
  for (const operand of paths) {
    const path = resolve(operand);
    let info;
    try {
      info = await lstat(path);
    } catch (error) {
      throw new WalkError(`${operand}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
    if (rootDir !== undefined && path !== rootDir && !path.startsWith(rootDir + sep))
      throw new WalkError(`${operand} is not inside --root ${root}`);
    if (info.isDirectory()) await visit(path, rootDir ?? path, 0);
    else if (info.isFile()) add(path, toSource(rootDir ? relative(rootDir, path) : basename(path)));
    else throw new WalkError(`${operand} is neither a file nor a directory`);
  }
  return out;
}

function toSource(relativePath: string): string {
  return relativePath.split(sep).join('/');
}
