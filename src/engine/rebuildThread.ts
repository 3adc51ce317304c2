// Runs one graph build in a worker thread (rebuildWorker.ts) and owns its temporary file: the vectors
// are transferred to the worker (one copy, made by the hand-off), the worker writes the graph to a
// fresh temporary directory, and the caller reads it back and calls `dispose`. Every running build is
// registered, so shutdown (`stopGraphRebuilds`) terminates them and removes their files, and a process
// that exits without shutdown still removes them.
// The worker module is found next to this one (src/workerEntry.ts says how a worker starts).

import { mkdtempSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { siblingModule, workerEntry } from '../workerEntry.ts';
import type { RebuildDone, RebuildTask } from './rebuildWorker.ts';

/** The worker module of this build (sources or dist/). */
export const REBUILD_WORKER_URL = siblingModule('rebuildWorker', import.meta.url);

/** Thrown by a build's `done` when it was stopped (store closed, shutdown): not a failure. */
export class RebuildCancelledError extends Error {
  constructor() {
    super('graph rebuild cancelled');
    this.name = 'RebuildCancelledError';
  }
}

export type WorkerBuild = {
  /** The written graph's path; rejects when the worker fails, crashes or is cancelled. */
  readonly done: Promise<string>;
  /** Terminates the worker (if running) and removes the temporary directory. */
  dispose(): Promise<void>;
};

const running = new Set<{ dir: string; worker: Worker | undefined; cancel(): Promise<void> }>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Workers die with the process; their files would not.
  process.once('exit', () => {
    for (const build of running) rmSync(build.dir, { recursive: true, force: true });
  });
}

/**
 * Starts a build in a worker thread.
 * @param task build parameters and vectors (its `path` is filled in here)
 * @param where `workerUrl`: the worker module (tests inject a broken one); `tmpDir`: where the graph
 *   file's directory is made (default: the OS temporary directory)
 * @returns the running build
 */
export function buildInWorker(
  task: Omit<RebuildTask, 'path'>,
  { workerUrl = REBUILD_WORKER_URL, tmpDir = tmpdir() }: { workerUrl?: URL; tmpDir?: string } = {},
): WorkerBuild {
  installExitHook();
  const dir = mkdtempSync(join(tmpDir, 'arkivector-rebuild-'));
  const path = join(dir, 'hnsw.bin');
  let settled = false;
  let cancelled = false;
  let worker: Worker | undefined;
  const done = new Promise<string>((resolve, reject) => {
    const finish = (error?: Error) => {
      if (settled) return;
      settled = true;
      if (cancelled) reject(new RebuildCancelledError());
      else if (error) reject(error);
      else resolve(path);
    };
    try {
      const { entry, eval: isEval } = workerEntry(workerUrl);
      worker = new Worker(entry, {
        eval: isEval,
        workerData: { ...task, path } satisfies RebuildTask,
        transferList: [task.vectors.buffer as ArrayBuffer],
      });
    } catch (error) {
      finish(error as Error);
      return;
    }
    // Not unref'd: a caller awaiting the rebuild (store.apply, rebuilt()) must keep the process alive.
    // Shutdown does not wait for it: stopGraphRebuilds / store.close terminate it.
    let written = false;
    worker.once('message', (msg: RebuildDone) => {
      written = typeof msg?.written === 'number';
    });
    worker.once('error', (error) => finish(error));
    // Settled at exit, not at the message: the worker's graph is freed before the main thread reads the
    // file into a second one.
    worker.once('exit', (code) =>
      finish(
        written && code === 0
          ? undefined
          : new Error(`rebuild worker exited with code ${code} before writing the graph`),
      ),
    );
  });
  const entry = {
    dir,
    // Assigned synchronously by the Promise executor above (undefined when the Worker could not start).
    worker,
    cancel: async () => {
      if (!settled) cancelled = true;
      running.delete(entry);
      if (entry.worker !== undefined) await entry.worker.terminate();
      await rm(dir, { recursive: true, force: true });
    },
  };
  running.add(entry);
  return { done, dispose: entry.cancel };
}

/**
 * Terminates every running graph rebuild of this process and removes its files (shutdown). The stores
 * keep their current graphs; a later block may start a new rebuild.
 */
export async function stopGraphRebuilds(): Promise<void> {
  await Promise.all([...running].map((build) => build.cancel()));
}
