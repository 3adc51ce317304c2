// The verifier's vocabulary: a verdict per check, never a bare yes.

/** `verified`: the chain agrees; `refuted`: it does not (see evidence); `unverifiable`: see reason. */
export type Verdict = 'verified' | 'refuted' | 'unverifiable';

export interface Check {
  /** What was checked: block, chain, collection, entity, filter, distance, order, completeness, recall, count, total. */
  check: string;
  verdict: Verdict;
  /** What it is about, e.g. `result 1 (cat)`. */
  subject?: string;
  /** Refuted: what the chain says instead. */
  evidence?: string;
  /** Unverifiable: why. */
  reason?: string;
  /** Measured facts (an HNSW answer's recall against the exact top k). */
  detail?: Record<string, unknown>;
}

export type AnswerKind = 'search' | 'get' | 'count' | 'list';

export interface VerifyReport {
  /** refuted if any check is, else unverifiable if any check is, else verified. */
  verdict: Verdict;
  kind: AnswerKind;
  collection: string;
  block: number;
  block_hash: string | null;
  checks: Check[];
  /** What checking cost: JSON-RPC calls, HTTP requests (a batch is one) and milliseconds. */
  cost: { calls: number; requests: number; ms: number };
}

/** The answer or the request cannot be read as a REST answer of arkivector (not a verdict on the node). */
export class VerifyInputError extends Error {
  override name = 'VerifyInputError';
}

export function overall(checks: readonly Check[]): Verdict {
  if (checks.some((c) => c.verdict === 'refuted')) return 'refuted';
  if (checks.some((c) => c.verdict === 'unverifiable')) return 'unverifiable';
  return 'verified';
}
