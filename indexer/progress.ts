// What the indexer is doing from start to `live` (connecting, loading a snapshot, bootstrap entities/s,
// catch-up blocks/s): on a TTY one line rewritten in place on stderr, at most a few times a second;
// otherwise log lines, a few seconds apart, so a service's logs show the same story.
export interface BootstrapPaging {
  pages: number;
  nextCallAt?: number;
}

export interface ProgressSink {
  /** A milestone: shown at once (connecting, loading a snapshot, snapshot loaded, bootstrap done). */
  phase(text: string): void;
  /** Entities read so far; `pages` answered, and `nextCallAt` while it waits for the call budget (ms since the epoch). */
  bootstrap(entities: number, elapsedMs: number, paging?: BootstrapPaging): void;
  catchUp(info: { block: number; target: number; blocksPerSecond: number; entitiesPerSecond: number }): void;
  /** The node is live: clear the line. */
  done(): void;
}

const n = (x: number) => Math.round(x).toLocaleString('en-US');
const bootstrapText = (entities: number, elapsedMs: number, paging?: BootstrapPaging) =>
  `bootstrap: ${n(entities)} entities read${paging ? ` in ${n(paging.pages)} pages` : ''} (${n((entities * 1000) / Math.max(1, elapsedMs))}/s)${
    paging?.nextCallAt === undefined
      ? ''
      : `; waiting for the rpc budget, next call at ${new Date(paging.nextCallAt).toISOString().slice(11, 19)} UTC`
  }`;
const catchUpText = ({ block, target, blocksPerSecond, entitiesPerSecond }: Parameters<ProgressSink['catchUp']>[0]) =>
  `catch-up: block ${n(block)} / ${n(target)} (${n(blocksPerSecond)} blocks/s, ${n(entitiesPerSecond)} entities/s, ETA ${
    blocksPerSecond > 0 ? `${n((target - block) / blocksPerSecond)} s` : '?'
  })`;

/** Streams showing a progress line now: whoever writes a whole line there clears it first. */
const showing = new WeakSet<NodeJS.WritableStream>();

/**
 * Clears the progress line on `stream` if one is showing (the logger calls it before each log line, so
 * a log line never starts in the middle of the progress text; the next update draws the line again).
 */
export function clearProgressLine(stream: NodeJS.WritableStream = process.stderr): void {
  if (!showing.delete(stream)) return;
  stream.write('\r\x1b[2K');
}

/** One line on a terminal, rewritten in place. */
export function ttyProgress(stream: NodeJS.WriteStream = process.stderr, intervalMs = 250): ProgressSink {
  let last = 0;
  const show = (text: string) => {
    showing.add(stream);
    stream.write(`\r\x1b[2K${text}`);
  };
  const throttled = (text: string) => {
    const now = Date.now();
    if (now - last < intervalMs) return;
    last = now;
    show(text);
  };
  return {
    phase: (text) => show(text),
    // A wait for the call budget is shown at once: the line then stands still until the next call.
    bootstrap: (entities, elapsedMs, paging) =>
      (paging?.nextCallAt === undefined ? throttled : show)(bootstrapText(entities, elapsedMs, paging)),
    catchUp: (info) => throttled(catchUpText(info)),
    done: () => clearProgressLine(stream),
  };
}

/** Log lines (`progress`), for stderr that is not a terminal: milestones at once, rates every `intervalMs`. */
export function logProgress(
  logger: { info(fields: Record<string, unknown>, message: string): void },
  intervalMs = 5_000,
): ProgressSink {
  let last = 0;
  const throttled = (text: string) => {
    const now = Date.now();
    if (now - last < intervalMs) return;
    last = now;
    logger.info({ progress: text }, 'progress');
  };
  return {
    phase: (text) => logger.info({ progress: text }, 'progress'),
    // A wait for the call budget longer than the interval is logged at once (at 40 calls an hour, each one).
    bootstrap: (entities, elapsedMs, paging) => {
      const text = bootstrapText(entities, elapsedMs, paging);
      if (paging?.nextCallAt !== undefined && paging.nextCallAt - Date.now() >= intervalMs) {
        last = Date.now();
        logger.info({ progress: text }, 'progress');
      } else throttled(text);
    },
    catchUp: (info) => throttled(catchUpText(info)),
    done() {},
  };
}

export const silentProgress: ProgressSink = { phase() {}, bootstrap() {}, catchUp() {}, done() {} };
