// --kuradb-endpoint-file: where KuraDB's clients look for a running KuraDB. KuraDB writes its base URL to
// ~/.config/kuradb/endpoint and removes it on shutdown; Agenvoy reads the file (trimmed) before every call.
// The node writes its own URL there and removes the file on exit, unless another process has written
// it since (the content is checked first), so a KuraDB or a second node started later keeps its entry.
import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/** KuraDB's own location, the flag's default. */
export const KURADB_ENDPOINT_DEFAULT = join('~', '.config', 'kuradb', 'endpoint');

/** `~/…` against the user's home directory. */
export const expandHome = (path: string) =>
  path === '~' || path.startsWith('~/') ? join(homedir(), path.slice(1)) : path;

/**
 * The base URL KuraDB's clients should use for a listener at `url` (a wildcard bind answers on loopback).
 * @example endpointUrl('http://0.0.0.0:8787') // 'http://127.0.0.1:8787'
 */
export function endpointUrl(url: string): string {
  const u = new URL(url);
  if (u.hostname === '0.0.0.0' || u.hostname === '[::]' || u.hostname === 'localhost') u.hostname = '127.0.0.1';
  return u.origin;
}

export interface EndpointFile {
  readonly path: string;
  /** The file's previous content when this node replaced another process's entry. */
  readonly replaced: string | undefined;
  /** Removes the file if it still holds what this node wrote; safe to call more than once. */
  remove(): void;
}

/**
 * Writes `url` (and a newline, as KuraDB does not; readers trim) to `path`, creating its directory.
 * @param path the file (`~/` is the home directory)
 * @param url the base URL, `http://127.0.0.1:<port>`
 */
export function writeEndpointFile(path: string, url: string): EndpointFile {
  const file = expandHome(path);
  const content = `${url}\n`;
  let replaced: string | undefined;
  try {
    replaced = readFileSync(file, 'utf8').trim() || undefined;
  } catch {
    replaced = undefined;
  }
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, content, { mode: 0o600 });
  let removed = false;
  const onExit = () => remove();
  const remove = () => {
    if (removed) return;
    removed = true;
    process.off('exit', onExit);
    try {
      if (readFileSync(file, 'utf8') === content) unlinkSync(file);
    } catch {
      // Already gone, or unreadable: nothing of ours to remove.
    }
  };
  // Also on an exit that skips the orderly shutdown (a fatal error after start).
  process.on('exit', onExit);
  return { path: file, replaced, remove };
}
