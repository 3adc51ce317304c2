// CPU time of another process (all its threads), from /proc: on a shared, loaded machine a server's
// CPU milliseconds per request is a steadier measure of its cost than requests per second, which
// depend on how much of the machine the server happened to get.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

let ticksPerSecond: number | undefined;

/**
 * user + system CPU seconds consumed so far by process `pid` (all its threads), or by its main thread
 * alone with `mainThread` (the one that serves requests: the ceiling of its requests/s); undefined where
 * /proc is missing.
 */
export function processCpuSeconds(pid: number | undefined, mainThread = false): number | undefined {
  if (pid === undefined) return undefined;
  let stat: string;
  try {
    stat = readFileSync(mainThread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // Fields after the command name (which may hold spaces), 1-based from `state` = field 3.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) return undefined;
  ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  return (utime + stime) / ticksPerSecond;
}
