// A budget of JSON-RPC calls per hour (`--rpc-budget`): every call the node makes through its transport
// (each element of a batch, as a per-call rate limit counts them) is spent from a token bucket, and the
// follower asks how long to wait before its next step so the node stays within what the RPC allows
// (Tiramisu: 50 anonymous calls an hour per IP). Writes and status reads spend from the same bucket, so
// the follower slows down for them instead of the RPC refusing the node.
import type { RpcTransport } from './transport.ts';

export interface CallBudget {
  readonly callsPerHour: number;
  /** Calls the bucket holds when full. */
  readonly burst: number;
  /** Records calls made. */
  spend(calls: number): void;
  /**
   * Spends `calls` if the bucket holds them, or would be at most `overdraw` calls short after them; else
   * spends nothing. Returns 0 when spent, else how long (ms) until it would be.
   */
  trySpend(calls: number, overdraw?: number): number;
  /** How long (ms) until `calls` more fit the budget (0: now). */
  waitMs(calls: number): number;
  /**
   * Waits `ms` on the bucket's own clock, when it was given one (a test's, which it moves itself); absent,
   * the bucket runs on real time and whoever waits uses a timer of its own.
   */
  readonly sleep?: (ms: number) => Promise<void>;
}

/** A time source other than the wall clock for a bucket: `now` in ms, and a wait of `ms` on it. */
export interface BudgetClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

/**
 * @param callsPerHour the steady rate (> 0)
 * @param burst calls that may go out at once after a quiet spell (the bucket's size)
 * @param clock the bucket's time (default: the wall clock, and no `sleep`)
 * @example const budget = createCallBudget(40); budget.waitMs(5) // 0 while the bucket holds 5 calls
 */
export function createCallBudget(callsPerHour: number, burst = 10, clock?: BudgetClock): CallBudget {
  if (!(callsPerHour > 0)) throw new RangeError(`a call budget needs calls per hour > 0, not ${callsPerHour}`);
  const size = Math.max(1, Math.min(burst, callsPerHour));
  const perMs = callsPerHour / 3_600_000;
  const now = clock ? () => clock.now() : Date.now;
  let tokens = size;
  let at = now();
  const refill = () => {
    const t = now();
    tokens = Math.min(size, tokens + (t - at) * perMs);
    at = t;
  };
  return {
    callsPerHour,
    burst: size,
    spend(calls) {
      refill();
      tokens -= calls;
    },
    trySpend(calls, overdraw = 0) {
      refill();
      const short = calls - overdraw - tokens;
      if (short <= 0) {
        tokens -= calls;
        return 0;
      }
      return Math.ceil(short / perMs);
    },
    waitMs(calls) {
      refill();
      // Never more than the bucket holds: a step larger than the burst waits for a full bucket, then goes.
      const need = Math.min(calls, size);
      return tokens >= need ? 0 : Math.ceil((need - tokens) / perMs);
    },
    ...(clock ? { sleep: (ms: number) => clock.sleep(ms) } : {}),
  };
}

/**
 * The transport with every call counted as it goes out: `onCalls(n, methods)` for each request (1) or
 * batch (its length).
 */
export function countCalls(
  transport: RpcTransport,
  onCalls: (calls: number, methods: readonly string[]) => void,
): RpcTransport {
  return {
    url: transport.url,
    request<T>(method: string, params?: unknown[]) {
      onCalls(1, [method]);
      return transport.request<T>(method, params);
    },
    batch: (calls) => {
      onCalls(
        calls.length,
        calls.map((c) => c.method),
      );
      return transport.batch(calls);
    },
    close: () => transport.close(),
  };
}

/**
 * The transport with every call spent from `budget`. The calls are made as asked: the indexer waits for the
 * budget before each of its steps and each call of a bootstrap; writes and status reads do not wait, and
 * the indexer's next wait is longer for them.
 */
export function budgetedTransport(transport: RpcTransport, budget: CallBudget): RpcTransport {
  return countCalls(transport, (calls) => budget.spend(calls));
}
