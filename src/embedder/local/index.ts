// The local embedder (`--embedder local[:…]`, the default): a sentence-embedding model run in this
// process, in a worker thread (embedWorker.ts). The model comes from the cache, fetched from the hub at
// the first text call (or ahead of time by `arkivector model pull`), or from a folder given by path.
// Until it is ready every text call answers embedder_unavailable saying what is being fetched or why it
// failed; the rest of the node never waits for it.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Embedder, EmbedderState } from '../types.ts';
import { EmbedderUnavailableError } from '../errors.ts';
import { siblingModule, workerEntry } from '../../workerEntry.ts';
import { type LocalModelRef, modelName } from './catalog.ts';
import type { EmbedReply, EmbedWorkerData } from './embedWorker.ts';
import {
  describeCause,
  LOCAL_RETRY_AFTER_MS,
  LOCAL_RUNTIME_PACKAGES,
  type LocalFailureCause,
  retryDelayMs,
  waysOut,
} from './failure.ts';
import { ensureModel, type FetchProgress, hasModelFiles, ModelFetchError, modelFolder } from './modelCache.ts';

export {
  catalogNames,
  DEFAULT_LOCAL_MODEL,
  type LocalModelRef,
  MODEL_HUB_DEFAULT,
  modelName,
  parseLocalModel,
} from './catalog.ts';
export { ModelFetchError, ensureModel, type FetchProgress, modelFolder } from './modelCache.ts';
export { LOCAL_RETRY_AFTER_MS, LOCAL_RETRY_MAX_MS } from './failure.ts';

/** Texts per model run: one padded batch (longer batches pad more and block the worker longer). */
export const LOCAL_EMBED_BATCH = 32;
/** How long a text call waits for a model that is being fetched or loaded before it answers unavailable. */
export const LOCAL_READY_WAIT_MS = 15_000;

export interface LocalEmbedderOptions {
  /** Hub base URL; `off`: never fetch (a model must be in the cache or given by path). */
  hub: string;
  /** The model cache's root (the configuration's `modelCache`); a model given by path needs none. */
  cacheRoot?: string;
  idleTimeoutMs?: number;
  /** The whole fetch's deadline (default MODEL_FETCH_DEADLINE_MS). */
  fetchDeadlineMs?: number;
  /** Largest model file fetched (default MODEL_FILE_MAX_BYTES). */
  maxFileBytes?: number;
  readyWaitMs?: number;
  /** First wait after a failure that another try may fix (it doubles per failure); see failure.ts. */
  retryAfterMs?: number;
  /** Threads the model may use in its worker (default 1: the node's own work keeps a core). */
  threads?: number;
  maxBatch?: number;
  /**
   * The worker's JS heap cap in MB (unset: V8's default). Past it only the worker dies; the node answers
   * embedder_unavailable for the calls in flight and starts a new worker at the next text call.
   */
  workerHeapMb?: number;
  onProgress?(progress: FetchProgress): void;
  onState?(state: EmbedderState): void;
  /** The packages the model runs on, checked at creation (default LOCAL_RUNTIME_PACKAGES). */
  runtimePackages?: readonly string[];
}

/** The packages of `names` that cannot be resolved from here (an install that dropped them). */
function missingPackages(names: readonly string[]): string[] {
  const require = createRequire(import.meta.url);
  return names.filter((name) => {
    try {
      require.resolve(name);
      return false;
    } catch {
      return true;
    }
  });
}

export interface LocalEmbedder extends Embedder {
  readonly kind: 'local';
  embedMany(texts: readonly string[]): Promise<number[][]>;
  state(): EmbedderState;
  /** Whether the model is on disk (a folder, or in the cache): loading it fetches nothing. */
  onDisk(): boolean;
  /** Fetches and loads now; resolves once ready, rejects with the failure. */
  ready(): Promise<void>;
  close(): Promise<void>;
}

/** A model that cannot be had or loaded, with its cause. */
class LocalModelError extends Error {
  constructor(
    message: string,
    readonly failure: LocalFailureCause,
  ) {
    super(message);
  }
}

export function createLocalEmbedder(ref: LocalModelRef, options: LocalEmbedderOptions): LocalEmbedder {
  if (ref.kind === 'hub' && options.cacheRoot === undefined)
    throw new Error(`the local model ${ref.model.repo} needs a model cache folder (cacheRoot)`);
  const root = options.cacheRoot ?? '';
  const source =
    ref.kind === 'path' ? ref.path : `${ref.model.repo}@${ref.model.revision.slice(0, 12)} from ${options.hub}`;
  const prefixes = ref.kind === 'hub' ? ref.model : ref;
  const maxTokens = ref.kind === 'hub' ? ref.model.maxTokens : ref.maxTokens;
  const maxBatch = Math.max(1, options.maxBatch ?? LOCAL_EMBED_BATCH);
  let state: EmbedderState = { state: 'idle', source };
  let starting: Promise<void> | undefined;
  let closed = false;
  /** Failures in a row, when the next try may start, and whether the model was on disk then. */
  let failures = 0;
  let retryAt = 0;
  let onDiskAtFailure = false;
  const cacheFolder = ref.kind === 'hub' ? modelFolder(root, ref.model) : undefined;
  let worker: Worker | undefined;
  let nextId = 0;
  const pending = new Map<number, { resolve(v: number[][]): void; reject(e: Error): void }>();
  const set = (next: EmbedderState) => {
    state = next;
    options.onState?.(next);
  };

  // Checked once, at creation: without them no model runs here, so nothing is fetched and the node says so
  // from its start (banner, status, instructions) instead of at the first text call.
  const missing = missingPackages(options.runtimePackages ?? LOCAL_RUNTIME_PACKAGES);

  async function folder(): Promise<string> {
    if (missing.length > 0)
      throw new LocalModelError(`${missing.join(' and ')} cannot be found from this installation`, 'no_runtime');
    if (ref.kind === 'path') {
      if (!hasModelFiles(ref.path))
        throw new LocalModelError(
          `${ref.path} is not a model folder (it needs onnx/model.onnx, tokenizer.json, tokenizer_config.json, config.json)`,
          'not_a_folder',
        );
      return ref.path;
    }
    const cached = modelFolder(root, ref.model);
    if (hasModelFiles(cached)) return cached;
    if (options.hub === 'off')
      throw new LocalModelError(
        `${ref.model.name} is not in the cache (${cached}) and fetching is off (--model-hub off): run arkivector model pull ${ref.model.name} where the hub is reachable, or copy the folder there`,
        'not_cached',
      );
    set({ state: 'fetching', source, received_bytes: 0, total_bytes: null });
    return ensureModel(ref.model, {
      root,
      hub: options.hub,
      idleTimeoutMs: options.idleTimeoutMs,
      deadlineMs: options.fetchDeadlineMs,
      maxFileBytes: options.maxFileBytes,
      verify: (staged) => probe(staged),
      onProgress(progress) {
        state = {
          state: 'fetching',
          source,
          file: progress.file,
          received_bytes: progress.receivedBytes,
          total_bytes: progress.totalBytes ?? null,
        };
        options.onProgress?.(progress);
      },
    });
  }

  function newWorker(path: string): Worker {
    const { entry, eval: isEval } = workerEntry(siblingModule('embedWorker', import.meta.url));
    return new Worker(entry, {
      eval: isEval,
      workerData: { folder: path, maxTokens, threads: options.threads ?? 1 } satisfies EmbedWorkerData,
      ...(options.workerHeapMb ? { resourceLimits: { maxOldGenerationSizeMb: options.workerHeapMb } } : {}),
    });
  }

  /** Loads the model of `path` once in a worker of its own, then stops it: rejects if it does not load. */
  async function probe(path: string): Promise<void> {
    const w = newWorker(path);
    try {
      await new Promise<void>((resolve, reject) => {
        w.on('message', (msg: EmbedReply) => {
          if ('ready' in msg) resolve();
          else if ('fatal' in msg) reject(new Error(msg.fatal));
        });
        w.once('error', reject);
        w.once('exit', (code) => reject(new Error(`the worker exited (code ${code})`)));
      });
    } finally {
      await w.terminate();
    }
  }

  function startWorker(path: string): Promise<void> {
    set({ state: 'loading', source });
    const w = newWorker(path);
    // Referenced while it loads and while calls are in flight; an idle worker does not keep a process alive.
    worker = w;
    return new Promise<void>((resolve, reject) => {
      w.on('message', (msg: EmbedReply) => {
        if ('ready' in msg) {
          if (pending.size === 0) w.unref();
          set({ state: 'ready', source, dim: msg.ready.dim });
          resolve();
        } else if ('fatal' in msg) reject(new LocalModelError(msg.fatal, 'invalid'));
        else {
          const call = pending.get(msg.id);
          pending.delete(msg.id);
          if (pending.size === 0) w.unref();
          if (!call) return;
          if ('error' in msg) call.reject(new EmbedderUnavailableError(`the local embedder failed: ${msg.error}`));
          else {
            const out: number[][] = [];
            for (let i = 0; i < msg.vectors.length; i += msg.dim)
              out.push(Array.from(msg.vectors.subarray(i, i + msg.dim)));
            call.resolve(out);
          }
        }
      });
      w.once('error', (error) => reject(new LocalModelError(error.message, 'invalid')));
      w.once('exit', (code) => {
        const error = new LocalModelError(`the local embedder's worker exited (code ${code})`, 'invalid');
        reject(error);
        if (worker === w) worker = undefined;
        for (const call of pending.values()) call.reject(new EmbedderUnavailableError(error.message));
        pending.clear();
        if (state.state === 'ready' && !closed) {
          // A crash after loading: the next text call starts a new worker.
          starting = undefined;
          set({ state: 'failed', source, error: error.message });
        }
      });
    });
  }

  function start(): Promise<void> {
    // A failure is left alone until its retry time (a hub that is down is not hammered, a file with the
    // wrong hash is not fetched at every call), unless the model has appeared on disk since (copied in).
    if (starting && (state.state !== 'failed' || (Date.now() < retryAt && (onDiskAtFailure || !onDisk()))))
      return starting;
    const attempt = (async () => {
      try {
        await startWorker(await folder());
        failures = 0;
      } catch (error) {
        await worker?.terminate();
        worker = undefined;
        const cause: LocalFailureCause =
          error instanceof ModelFetchError || error instanceof LocalModelError ? error.failure : 'invalid';
        failures += 1;
        retryAt = Date.now() + retryDelayMs(cause, failures, options.retryAfterMs ?? LOCAL_RETRY_AFTER_MS);
        onDiskAtFailure = onDisk();
        set({
          state: 'failed',
          source,
          error: describeCause(cause, (error as Error).message),
          cause,
          retry_at: new Date(retryAt).toISOString(),
          ways_out: waysOut(ref, cacheFolder, cause),
        });
        throw error;
      }
    })();
    starting = attempt;
    attempt.catch(() => {});
    return attempt;
  }

  function unavailable(): EmbedderUnavailableError {
    const s = state;
    const name = modelName(ref);
    if (s.state === 'fetching') {
      const of = s.total_bytes ? ` of ${(s.total_bytes / 1e6).toFixed(1)} MB` : '';
      return new EmbedderUnavailableError(
        `the local embedder is fetching ${name} (${s.file ?? 'starting'}: ${((s.received_bytes ?? 0) / 1e6).toFixed(1)} MB${of}) from ${source}: it has not failed, try again shortly`,
      );
    }
    if (s.state === 'failed')
      return new EmbedderUnavailableError(
        `the local embedder cannot load ${name}: ${s.error}. It is not tried again before ${s.retry_at ?? 'the next text call'}. ${s.ways_out ?? ''}`.trimEnd(),
      );
    return new EmbedderUnavailableError(`the local embedder is loading ${name}; try again shortly`);
  }

  async function whenReady(): Promise<Worker> {
    if (state.state !== 'ready' || !worker) {
      const waiting = start();
      const waitMs = options.readyWaitMs ?? LOCAL_READY_WAIT_MS;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), waitMs);
      });
      const outcome = await Promise.race([
        waiting.then(
          () => 'ready' as const,
          () => 'failed' as const,
        ),
        timeout,
      ]);
      clearTimeout(timer);
      if (outcome !== 'ready' || !worker) throw unavailable();
    }
    return worker;
  }

  async function run(texts: readonly string[], prefix: string): Promise<number[][]> {
    if (texts.length === 0) return [];
    const w = await whenReady();
    const out: number[][] = [];
    for (let startAt = 0; startAt < texts.length; startAt += maxBatch) {
      const id = nextId++;
      const batch = texts.slice(startAt, startAt + maxBatch).map((t) => prefix + t);
      const vectors = new Promise<number[][]>((resolve, reject) => pending.set(id, { resolve, reject }));
      w.ref();
      w.postMessage({ id, texts: batch });
      out.push(...(await vectors));
    }
    return out;
  }

  const known = ref.kind === 'hub' ? ref.model.dim : undefined;
  const onDisk = () => hasModelFiles(ref.kind === 'path' ? ref.path : modelFolder(root, ref.model));
  if (missing.length > 0) start().catch(() => {});
  return {
    model: modelName(ref),
    kind: 'local',
    from: ref.kind === 'path' ? 'folder' : 'hub',
    async embed(text) {
      const [vector] = await run([text], prefixes.queryPrefix);
      if (!vector) throw new EmbedderUnavailableError('the local embedder answered no embedding');
      return vector;
    },
    embedMany: (texts) => run(texts, prefixes.passagePrefix),
    // The loaded model's own width wins (a folder put in the cache by hand may hold another model); the
    // catalog's lets a collection be created while the model is still being fetched.
    async dimension() {
      if (state.state !== 'ready' && (known === undefined || onDisk())) await whenReady();
      return state.dim ?? known ?? 0;
    },
    knownDimension: () => state.dim ?? known,
    state: () => ({ ...state }),
    onDisk,
    ready: () => start(),
    async close() {
      // A worker stopped on purpose is not a failure (nothing to log, nothing to retry).
      closed = true;
      const w = worker;
      worker = undefined;
      await w?.terminate();
    },
  };
}
