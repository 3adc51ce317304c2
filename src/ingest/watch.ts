// --watch: after the first pass, follow the paths with chokidar (Node 20's recursive fs.watch does not
// exist on Linux) and sync the files that changed once events have been quiet for a debounce interval.
import { resolve } from 'node:path';
import { ingestOnce, INGEST_WATCH_DEBOUNCE_MS, type IngestOptions } from './run.ts';
import type { RemoteCollection } from './remote.ts';
import type { PassSummary } from './sync.ts';

export async function watchAndSync(
  options: IngestOptions & { signal: AbortSignal },
  remote: RemoteCollection | undefined,
  initialSources: Map<string, string>,
  onPass: (summary: PassSummary) => void,
  onReady: () => void,
  onError: (error: unknown) => void,
): Promise<void> {
  const { watch } = await import('chokidar');
  const watcher = watch(
    options.paths.map((p) => resolve(p)),
    {
      ignoreInitial: true,
      followSymlinks: false,
      // Hidden files and folders are not ingested, so their events are not watched either.
      ignored: (path: string) => /(^|[/\\])\.[^/\\]/.test(path),
      awaitWriteFinish: { stabilityThreshold: 200, pollInterval: 50 },
    },
  );
  const sourceOf = new Map(initialSources);
  let changed = new Set<string>();
  let removed = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const schedule = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      running = running.then(pass);
    }, INGEST_WATCH_DEBOUNCE_MS);
  };
  const pass = async () => {
    if (options.signal.aborted || (!changed.size && !removed.size)) return;
    const files = changed;
    const gone = [...removed].map((p) => sourceOf.get(p)).filter((s): s is string => s !== undefined);
    changed = new Set();
    removed = new Set();
    try {
      const summary = await ingestOnce(options, remote, { files, removed: gone });
      for (const f of summary.found) sourceOf.set(f.path, f.source);
      onPass(summary);
    } catch (error) {
      // The gateway may come back: the files stay pending for the next event's pass.
      for (const f of files) changed.add(f);
      for (const p of gone) removed.add(p);
      onError(error);
    }
  };
  watcher.on('add', (p) => {
    changed.add(resolve(p));
    schedule();
  });
  watcher.on('change', (p) => {
    changed.add(resolve(p));
    schedule();
  });
  watcher.on('unlink', (p) => {
    changed.delete(resolve(p));
    removed.add(resolve(p));
    schedule();
  });
  await new Promise<void>((ready) => watcher.once('ready', () => ready()));
  onReady();
  await new Promise<void>((stop) => {
    if (options.signal.aborted) stop();
    else options.signal.addEventListener('abort', () => stop(), { once: true });
  });
  clearTimeout(timer);
  await watcher.close();
  // The pass under way finishes its queued files (it sees the abort between files).
  await running;
}
