// The model cache: `${XDG_CACHE_HOME:-~/.cache}/arkivector/models/ORG--NAME/REVISION/`. A model is
// fetched from the hub (`${hub}/ORG/NAME/resolve/REVISION/PATH`) into a staging folder beside it, each
// file hashed while it streams and checked against the catalog's sha256, and the folder renamed into
// place only once every file is there: a failed fetch (404, 5xx, silence, wrong hash) leaves nothing
// behind. A folder put there by hand is used as it is (offline), without a hash check. Nodes sharing a
// cache each fetch into their own staging folder; the first complete folder in place is the one kept.
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { fetch } from 'undici';
import { redactUrl } from '../../redactUrl.ts';
import { type CatalogModel, MODEL_FILES } from './catalog.ts';

/** A fetch with no byte for this long is abandoned. */
export const MODEL_FETCH_IDLE_TIMEOUT_MS = 30_000;
/**
 * A model's whole fetch (every file) is abandoned past this: a hub dripping a byte now and then never trips
 * the idle timeout. It leaves the largest model named here time to arrive over a slow link.
 */
export const MODEL_FETCH_DEADLINE_MS = 30 * 60_000;
/**
 * A model file larger than this is refused (the largest model named here, multilingual-e5-small's ONNX
 * file, is well under it): a hub or mirror sending without end must not fill the disk.
 */
export const MODEL_FILE_MAX_BYTES = 2 * 1024 ** 3;
/** Redirects a model file's fetch follows (the hub sends one, to its file store). */
export const MODEL_FETCH_REDIRECTS_MAX = 5;

/**
 * Where a redirect from `from` leads. An https hub may not send a file over plain http (a file without a
 * pinned hash would then be anyone's on the path), nor to anything but http(s).
 */
export function redirectTarget(from: string, location: string): string {
  let next: URL;
  try {
    next = new URL(location, from);
  } catch {
    throw new ModelFetchError(`${redactUrl(from)} redirected to a location that is not a URL`, 'refused');
  }
  if (next.protocol !== 'https:' && next.protocol !== 'http:')
    throw new ModelFetchError(
      `${redactUrl(from)} redirected to ${next.protocol} (only http and https are fetched)`,
      'refused',
    );
  if (new URL(from).protocol === 'https:' && next.protocol !== 'https:')
    throw new ModelFetchError(`${redactUrl(from)} redirected from https to plain http: refused`, 'refused');
  return next.href;
}
/** Hashes of files the catalog does not pin, written at the first fetch. */
const RECORDED_HASHES = 'arkivector-hashes.json';

export const modelFolder = (root: string, model: CatalogModel): string =>
  join(root, model.repo.replace('/', '--'), model.revision);

/** A folder holds a model when every required file is there. */
export const hasModelFiles = (folder: string): boolean => MODEL_FILES.every((f) => existsSync(join(folder, f)));

export interface FetchProgress {
  file: string;
  receivedBytes: number;
  /** From content-length; undefined when the hub did not say. */
  totalBytes: number | undefined;
}

export interface FetchOptions {
  root: string;
  hub: string;
  idleTimeoutMs?: number;
  /** Default MODEL_FETCH_DEADLINE_MS, for all the model's files together. */
  deadlineMs?: number;
  /**
   * Checks a fetched folder that has a file without a pinned hash before it goes into the cache (the local
   * embedder loads it once); a folder it refuses is dropped.
   */
  verify?(folder: string): Promise<void>;
  /** Default MODEL_FILE_MAX_BYTES. */
  maxFileBytes?: number;
  onProgress?(progress: FetchProgress): void;
}

/**
 * Why a model could not be had: the hub cannot be reached, it refused (an HTTP error, a redirect we do not
 * follow), a file is over the size cap, a file's hash is not the pinned one, the transfer stalled (idle or
 * past the deadline), or what arrived does not load as a model.
 */
export type ModelFailureCause = 'unreachable' | 'refused' | 'too_large' | 'hash_mismatch' | 'stalled' | 'invalid';

/** A fetch that failed: the message says which file, from where, and why; `cause` classifies it. */
export class ModelFetchError extends Error {
  override name = 'ModelFetchError';
  constructor(
    message: string,
    readonly failure: ModelFailureCause,
  ) {
    super(message);
  }
}

/**
 * The model's folder in the cache, fetched first when it is not there.
 * @throws ModelFetchError
 */
export async function ensureModel(model: CatalogModel, options: FetchOptions): Promise<string> {
  const folder = modelFolder(options.root, model);
  if (hasModelFiles(folder)) return folder;
  await mkdir(dirname(folder), { recursive: true });
  await removeDeadStaging(folder);
  const staging = `${folder}.partial-${process.pid}-${randomBytes(4).toString('hex')}`;
  const deadline = Date.now() + (options.deadlineMs ?? MODEL_FETCH_DEADLINE_MS);
  try {
    const recorded: Record<string, string> = {};
    for (const [file, sha256] of Object.entries(model.files)) {
      const digest = await fetchFile(model, file, join(staging, file), options, deadline);
      if (sha256 !== undefined && digest !== sha256)
        throw new ModelFetchError(
          `${model.repo}/${file} at ${model.revision} has sha256 ${digest}, expected ${sha256}: refused (a changed or corrupted file)`,
          'hash_mismatch',
        );
      if (sha256 === undefined) recorded[file] = digest;
    }
    if (Object.keys(recorded).length > 0) {
      // Nothing pins these files: what the hub sent must at least load before the cache keeps it.
      try {
        await options.verify?.(staging);
      } catch (error) {
        throw new ModelFetchError(
          `${model.repo} at ${model.revision} from ${redactUrl(options.hub)} does not load as a model (${(error as Error).message}): nothing was kept in the cache`,
          'invalid',
        );
      }
      await writeFile(join(staging, RECORDED_HASHES), `${JSON.stringify(recorded, null, 2)}\n`);
    }
    // Another node sharing the cache may have finished first and be loading its folder: keep it (the
    // same files, by hash). A broken folder in the way is moved aside first, never removed in place.
    if (hasModelFiles(folder)) return folder;
    if (existsSync(folder)) {
      const stale = `${folder}.stale-${process.pid}-${randomBytes(4).toString('hex')}`;
      await rename(folder, stale).catch(() => undefined);
      await rm(stale, { recursive: true, force: true });
    }
    try {
      await rename(staging, folder);
    } catch (error) {
      if (!hasModelFiles(folder)) throw error;
    }
    return folder;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * Staging folders of fetches whose process is gone (killed mid-fetch: a model's worth of files each),
 * and folders moved aside. A live process's staging, this node's or another's on this host, is left alone.
 */
async function removeDeadStaging(folder: string): Promise<void> {
  const prefix = `${basename(folder)}.`;
  const names = await readdir(dirname(folder)).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const match = /^(partial|stale)-(\d+)-[0-9a-f]+$/.exec(name.slice(prefix.length));
    if (!match || processAlive(Number(match[2]))) continue;
    await rm(join(dirname(folder), name), { recursive: true, force: true });
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, another user's.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The hashes recorded at the first fetch of files the catalog does not pin. */
export async function recordedHashes(folder: string): Promise<Record<string, string>> {
  try {
    return JSON.parse(await readFile(join(folder, RECORDED_HASHES), 'utf8')) as Record<string, string>;
  } catch {
    return {};
  }
}

async function fetchFile(
  model: CatalogModel,
  file: string,
  dest: string,
  options: FetchOptions,
  deadline: number,
): Promise<string> {
  const url = `${options.hub.replace(/\/$/, '')}/${model.repo}/resolve/${model.revision}/${file}`;
  const where = `${model.repo}/${file} from ${redactUrl(url)}`;
  const idleMs = options.idleTimeoutMs ?? MODEL_FETCH_IDLE_TIMEOUT_MS;
  const deadlineMs = options.deadlineMs ?? MODEL_FETCH_DEADLINE_MS;
  const controller = new AbortController();
  let pastDeadline = false;
  const overall = setTimeout(
    () => {
      pastDeadline = true;
      controller.abort();
    },
    Math.max(0, deadline - Date.now()),
  );
  let timer = setTimeout(() => controller.abort(), idleMs);
  const touch = () => {
    clearTimeout(timer);
    timer = setTimeout(() => controller.abort(), idleMs);
  };
  await mkdir(dirname(dest), { recursive: true });
  try {
    let target = url;
    let response = await fetch(target, { signal: controller.signal, redirect: 'manual' });
    for (let hops = 0; response.status >= 300 && response.status < 400; hops++) {
      const location = response.headers.get('location');
      await response.body?.cancel();
      if (location === null)
        throw new ModelFetchError(`${where}: HTTP ${response.status} without a location`, 'refused');
      if (hops >= MODEL_FETCH_REDIRECTS_MAX)
        throw new ModelFetchError(`${where}: more than ${MODEL_FETCH_REDIRECTS_MAX} redirects`, 'refused');
      target = redirectTarget(target, location);
      response = await fetch(target, { signal: controller.signal, redirect: 'manual' });
    }
    if (!response.ok || !response.body) {
      await response.body?.cancel();
      throw new ModelFetchError(`${where}: HTTP ${response.status}`, 'refused');
    }
    const length = Number(response.headers.get('content-length'));
    const totalBytes = Number.isFinite(length) && length > 0 ? length : undefined;
    const maxBytes = options.maxFileBytes ?? MODEL_FILE_MAX_BYTES;
    const tooLarge = (bytes: number) =>
      new ModelFetchError(`${where}: ${bytes} bytes, more than the ${maxBytes} a model file may have`, 'too_large');
    if (totalBytes !== undefined && totalBytes > maxBytes) {
      await response.body.cancel();
      throw tooLarge(totalBytes);
    }
    const hash = createHash('sha256');
    const out = createWriteStream(dest);
    const closed = new Promise<void>((resolve, reject) => {
      out.once('close', resolve);
      out.once('error', reject);
    });
    let receivedBytes = 0;
    try {
      for await (const chunk of response.body) {
        touch();
        hash.update(chunk);
        receivedBytes += chunk.byteLength;
        if (receivedBytes > maxBytes) throw tooLarge(receivedBytes);
        if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
        options.onProgress?.({ file, receivedBytes, totalBytes });
      }
    } finally {
      out.end();
      await closed;
    }
    if (totalBytes !== undefined && receivedBytes !== totalBytes)
      throw new ModelFetchError(`${where}: ${receivedBytes} of ${totalBytes} bytes arrived`, 'stalled');
    return hash.digest('hex');
  } catch (error) {
    if (error instanceof ModelFetchError) throw error;
    if (pastDeadline)
      throw new ModelFetchError(`${where}: the model's fetch took longer than ${deadlineMs} ms`, 'stalled');
    if (controller.signal.aborted) throw new ModelFetchError(`${where}: no data for ${idleMs} ms`, 'stalled');
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw new ModelFetchError(`${where}: ${cause?.code ?? cause?.message ?? (error as Error).message}`, 'unreachable');
  } finally {
    clearTimeout(timer);
    clearTimeout(overall);
  }
}
