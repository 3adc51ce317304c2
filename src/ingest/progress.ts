// The progress line of a TTY and the summary line at the end of a pass.
import type { PassSummary, Progress } from './sync.ts';

/** Least time between two redraws of the progress line. */
const REDRAW_MS = 200;

export function progressPrinter(stream: NodeJS.WritableStream & { isTTY?: boolean }): {
  update(progress: Progress): void;
  clear(): void;
} {
  let last = 0;
  let shown = false;
  return {
    update(p) {
      if (!stream.isTTY) return;
      const now = Date.now();
      if (now - last < REDRAW_MS && p.files_done < p.files_total) return;
      last = now;
      shown = true;
      stream.write(`\r\x1b[K${progressLine(p, now)}`);
    },
    clear() {
      if (shown) stream.write('\r\x1b[K');
      shown = false;
    },
  };
}

export function progressLine(p: Progress, now: number): string {
  const seconds = Math.max((now - p.started_ms) / 1000, 0.001);
  const rate = p.files_done / seconds;
  const left = p.files_total - p.files_done;
  const eta = rate > 0 && left > 0 ? ` · ETA ${formatSeconds(left / rate)}` : '';
  return (
    `ingest: ${p.files_done}/${p.files_total} files · ${p.chunks} chunks · ${p.written} written ` +
    `(${(p.written / seconds).toFixed(1)}/s) · ${p.deleted} deleted · ${rate.toFixed(1)} files/s${eta}`
  );
}

export function summaryLine(s: PassSummary): string {
  const verb = s.dry_run ? 'would create' : 'created';
  const tx = s.dry_run ? `~${s.transactions} transactions` : `${s.transactions} transactions`;
  return (
    `${s.collection}: ${s.files} files, ${s.chunks} chunks: ${verb} ${s.created}, ` +
    `${s.dry_run ? 'update' : 'updated'} ${s.updated}, ${s.dry_run ? 'delete' : 'deleted'} ${s.deleted}, ` +
    `unchanged ${s.unchanged}; ${tx}; ${s.skipped.length} skipped, ${s.failed.length} failed` +
    `${s.interrupted ? '; interrupted' : ''} (${(s.duration_ms / 1000).toFixed(1)} s)`
  );
}

function formatSeconds(s: number): string {
  if (s < 60) return `${Math.ceil(s)}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(Math.ceil(s % 60)).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}
