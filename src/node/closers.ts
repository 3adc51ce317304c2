// What a node started, undone in reverse order: at shutdown (each failure logged, the rest still run)
// or when a later start step fails (quietly: the start's own error is the one reported).
import type { Logger } from 'pino';

export class Closers {
  readonly #steps: (() => Promise<void>)[] = [];

  push(close: () => Promise<void>): void {
    this.#steps.push(close);
  }

  /** Runs every step, the last pushed first; `logger` hears of the ones that fail. */
  async closeAll(logger?: Logger): Promise<void> {
    for (const close of this.#steps.splice(0).reverse())
      await close().catch((error) => logger?.error({ error: (error as Error).message }, 'shutdown step failed'));
  }
}
