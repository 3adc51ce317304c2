// Pacing to the RPC's call budget: a step waits until its calls fit, a bootstrap's page walk before each
// call. Quiet chosen so is not a stall: `quietUntil` moves the stall clock.
import type { PageOptions } from '../src/chain/index.ts';
import type { ProgressSink } from './progress.ts';
import type { BootstrapProgress, IndexerLogger, IndexerOptions } from './types.ts';

/**
 * Calls a paced step is budgeted for: the head with the tip's header, then a span's end header, its logs
 * and its start's header again (a span over blocks that logged nothing; each registry transaction adds 2).
 */
export const PACED_STEP_CALLS = 5;

/** What the pacer reads of the indexer it paces. */
export interface PacingHost {
  readonly stopped: boolean;
  /** Failed steps in a row. */
  readonly failures: number;
  readonly bootstrapping: BootstrapProgress | undefined;
  readonly logger: IndexerLogger;
  readonly progress: ProgressSink;
  /** Sleeps `ms`, cut short by a poke or a stop. */
  sleep(ms: number): Promise<void>;
}

export class Pacer {
  /** Until when the node chose to wait for its call budget after a good step (ms since the epoch). */
  quietUntil = 0;
  /** Page walks of the indexer wait for the call budget before each call. */
  readonly paged: PageOptions = { beforeCall: () => this.awaitBudget(1) };

  constructor(
    private readonly budget: IndexerOptions['callBudget'],
    private readonly host: PacingHost,
  ) {}

  /** When the next step may start under the call budget (ms since the epoch), if it is waiting for it. */
  get pacedUntil(): number | undefined {
    return this.quietUntil > Date.now() ? this.quietUntil : undefined;
  }

  /** Waits until a step's calls fit the call budget. */
  pace(): Promise<void> {
    return this.awaitBudget(PACED_STEP_CALLS);
  }

  /**
   * Waits until `calls` more fit the call budget. The budget is asked again after each wait: writes and
   * status reads spend from it too, so a poke (the service pokes after a write) re-reads how long is left
   * instead of cutting the wait short; a stop ends it.
   */
  async awaitBudget(calls: number): Promise<void> {
    const { budget, host } = this;
    if (!budget) return;
    let said: number | undefined;
    for (let wait = budget.waitMs(calls); wait > 0 && !host.stopped; wait = budget.waitMs(calls)) {
      const until = Date.now() + wait;
      // Quiet chosen after a good step, or before the first retry of a failed one (a bootstrap page that
      // did not arrive), is not a stall; from a second failure in a row on, the stall clock runs on, so a
      // dead RPC still shows `stalled` 3 block times after the retry that was due.
      if (host.failures <= 1) this.quietUntil = until;
      // Said again only when a spend moved it: pokes (a newHeads every block with --ws) wake this wait too.
      if (said === undefined || Math.abs(until - said) >= 1_000) {
        said = until;
        host.logger.debug({ wait_ms: wait, calls_per_hour: budget.callsPerHour }, 'pacing to the rpc budget');
        const progress = host.bootstrapping;
        if (progress)
          host.progress.bootstrap(progress.entities, Date.now() - progress.startedAt, {
            pages: progress.pages,
            nextCallAt: until,
          });
      }
      await (budget.sleep ? budget.sleep(wait) : host.sleep(wait));
    }
  }
}
