// Progress of long indexer work (bootstrap, catch-up) on a TTY: one line rewritten in place on stderr,
// at most a few times a second. Silent when stderr is not a terminal (logs carry the same facts).
export interface ProgressSink {
  bootstrap(entities: number, elapsedMs: number): void;
  catchUp(info: { block: number; target: number; blocksPerSecond: number; entitiesPerSecond: number }): void;
  done(): void;
}

export function ttyProgress(stream: NodeJS.WriteStream = process.stderr, intervalMs = 250): ProgressSink {
  let last = 0;
  let shown = false;
  const write = (text: string) => {
    const now = Date.now();
    if (now - last < intervalMs) return;
    last = now;
    shown = true;
    stream.write(`\r\x1b[2K${text}`);
  };
  const n = (x: number) => Math.round(x).toLocaleString('en-US');
  return {
    bootstrap(entities, elapsedMs) {
      write(`bootstrap: ${n(entities)} entities read (${n((entities * 1000) / Math.max(1, elapsedMs))}/s)`);
    },
    catchUp({ block, target, blocksPerSecond, entitiesPerSecond }) {
      const eta = blocksPerSecond > 0 ? `${n((target - block) / blocksPerSecond)} s` : '?';
      write(
        `catch-up: block ${n(block)} / ${n(target)} (${n(blocksPerSecond)} blocks/s, ${n(entitiesPerSecond)} entities/s, ETA ${eta})`,
      );
    },
    done() {
      if (shown) stream.write('\r\x1b[2K');
      shown = false;
    },
  };
}

export const silentProgress: ProgressSink = { bootstrap() {}, catchUp() {}, done() {} };
