// What every suite prints and writes: progress on stderr, the report on stdout, and its rows as JSON
// (`--out FILE`), with the machine's load average beside them (the benches share their cores).
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';

export function log(msg: string): void {
  process.stderr.write(`${msg}\n`);
}

const tty = process.stderr.isTTY === true;
/** A progress line on a terminal, redrawn about a hundred times over `total`. */
export function progress(label: string, done: number, total: number): void {
  if (!tty) return;
  if (done % Math.max(1, Math.floor(total / 100)) !== 0 && done !== total) return;
  process.stderr.write(`\r${label}: ${done}/${total} (${Math.round((100 * done) / total)}%)   `);
  if (done === total) process.stderr.write('\n');
}

/** The load average (1, 5, 15 min), rounded to hundredths. */
export const loadAvg = (): number[] => loadavg().map((l) => Math.round(l * 100) / 100);

/** Writes a suite's result as indented JSON (nothing without a file). */
export function writeJson(file: string | undefined, result: unknown): void {
  if (file === undefined) return;
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  log(`wrote ${file}`);
}

/** The median of a list of numbers (the upper one of an even count). */
export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
