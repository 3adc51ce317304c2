// The head a node expects the chain to be at now. A node paced to its call budget reads the head minutes
// apart, while the chain keeps making blocks; the heads it did read, with when it read them, give the
// chain's pace, and the last one plus the blocks since at that pace is where the chain should be now.
import { hexToNumber, type Hex } from 'viem';
import { RpcResponseError, type RpcTransport } from './transport.ts';

/** Head reads the pace is measured over (the oldest is dropped first). */
export const HEAD_SAMPLES_MAX = 16;

interface Sample {
  head: number;
  at: number;
}

export class HeadClock {
  #samples: Sample[] = [];

  /**
   * @param fallbackBlockMs the chain's block time, used until two head reads measured its pace (the preset's)
   * @param now the clock (ms since the epoch)
   */
  constructor(
    readonly fallbackBlockMs: number,
    private readonly now: () => number = Date.now,
  ) {
    if (!(fallbackBlockMs > 0)) throw new RangeError(`a block time must be > 0 ms, not ${fallbackBlockMs}`);
  }

  /** A head the node read, at `at` (default: now). */
  see(head: number, at = this.now()): void {
    const last = this.#samples.at(-1);
    // A lower head (a reorg to a shorter chain, another backend behind a balancer) says nothing of the pace
    // the earlier reads measured: start over from it.
    if (last && head < last.head) this.#samples = [];
    if (last && at < last.at) return;
    this.#samples.push({ head, at });
    if (this.#samples.length > HEAD_SAMPLES_MAX) this.#samples.shift();
  }

  /** The last head read, and when. */
  get latest(): Readonly<Sample> | undefined {
    return this.#samples.at(-1);
  }

  /**
   * Milliseconds per block over the reads kept. No block seen across them means the chain is at least that
   * slow (an idle devnet), never faster than the preset.
   */
  blockMs(): number {
    const first = this.#samples[0];
    const last = this.#samples.at(-1);
    if (!first || !last || last.at === first.at) return this.fallbackBlockMs;
    const blocks = last.head - first.head;
    const span = last.at - first.at;
    return blocks > 0 ? span / blocks : Math.max(this.fallbackBlockMs, span);
  }

  /**
   * The head expected now: `head` (read at `seenAt`) plus the whole blocks since at the measured pace, or
   * the clock's own later read, whichever is newer. Never below `head`.
   */
  estimate(head: number, seenAt: number | undefined, now = this.now()): number {
    const latest = this.latest;
    const base = latest && (seenAt === undefined || latest.at >= seenAt) ? latest : { head, at: seenAt ?? now };
    const since = Math.max(0, now - base.at);
    return Math.max(head, base.head + Math.floor(since / this.blockMs()));
  }
}

/** The transport with every head it answers (`eth_blockNumber`, alone or in a batch) shown to `clock`. */
export function observeHeads(transport: RpcTransport, clock: HeadClock): RpcTransport {
  const seen = (answer: unknown) => {
    if (typeof answer === 'string' && /^0x[0-9a-fA-F]+$/.test(answer)) clock.see(hexToNumber(answer as Hex));
  };
  return {
    url: transport.url,
    async request<T>(method: string, params?: unknown[]) {
      const answer = await transport.request<T>(method, params);
      if (method === 'eth_blockNumber') seen(answer);
      return answer;
    },
    async batch(calls) {
      const answers = await transport.batch(calls);
      calls.forEach((call, i) => {
        const answer = answers[i];
        if (call.method === 'eth_blockNumber' && !(answer instanceof RpcResponseError)) seen(answer);
      });
      return answers;
    },
    close: () => transport.close(),
  };
}
