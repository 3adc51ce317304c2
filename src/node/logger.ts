// The node's log: pino JSON lines on stderr (stdout belongs to MCP stdio), or one readable line per record
// for a person at a terminal.
import pino, { type Logger } from 'pino';
import { clearProgressLine } from '../../indexer/index.ts';
import type { ServeConfig } from '../config.ts';

export function createLogger(
  level: ServeConfig['logLevel'],
  format: ServeConfig['logFormat'] = 'json',
  stderr: NodeJS.WriteStream = process.stderr,
): Logger {
  const options = { level, base: undefined, timestamp: pino.stdTimeFunctions.isoTime };
  // Logs go to stderr: stdout belongs to MCP stdio.
  if (format === 'json' && !stderr.isTTY) return pino(options, pino.destination(2));
  // On a terminal a log line first clears the progress line the indexer may be showing there.
  const render = format === 'json' ? (line: string) => line : prettyLine;
  return pino(options, {
    write: (line: string) => {
      clearProgressLine(stderr);
      stderr.write(render(line));
    },
  });
}

const LEVEL_NAMES: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};

/** One pino JSON line as `HH:MM:SS LEVEL message key=value …` for a person at a terminal. */
export function prettyLine(line: string): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const { level, time, msg, ...fields } = record;
  const clock = typeof time === 'string' ? time.slice(11, 19) : '';
  const rest = Object.entries(fields)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  return `${clock} ${(LEVEL_NAMES[level as number] ?? String(level)).padEnd(5)} ${String(msg ?? '')}${rest ? ` ${rest}` : ''}\n`;
}
