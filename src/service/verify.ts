// verify: checks an answer another node gave against the chain through the RPC this node trusts
// (--verify-rpc, or a stdio node's own), with src/verify/: a verdict per check. Completeness stays within
// the default bound here: a caller of a public node must not make it read a large collection per call.
// On a node with a call budget (--rpc-budget) every call of a verification is spent from it, as the
// follower's and the signer's are.
import { z } from 'zod';
import type { CallBudget } from '../chain/index.ts';
import { ArkivectorError } from '../errors.ts';
import {
  VERIFY_COMPLETE_MAX,
  verifierRpc,
  verifyAnswer,
  VerifyInputError,
  type VerifierRpc,
  type VerifyReport,
} from '../verify/index.ts';
import type { ServiceContext } from './context.ts';
import { InvalidArgumentError } from './errors.ts';
import { collectionArg } from './schemas.ts';
import { validate } from './validate.ts';

const body = z.record(z.string(), z.unknown());
const verdict = z.enum(['verified', 'refuted', 'unverifiable']);

export const verifyArgs = {
  collection: collectionArg,
  answer: body.describe(
    "The node's answer (a search, get, count or list_entities result, as it gave it; it must carry as_of_block_hash)",
  ),
  request: body
    .optional()
    .describe(
      `The arguments it answered (where, filter, k, vector, include_document, limit, order, ref); completeness is checked for collections of up to ${VERIFY_COMPLETE_MAX} vector entities`,
    ),
};
export const verifySchema = z.object(verifyArgs);

export const verifyResultShape = {
  verdict: verdict.describe('refuted if any check is, else unverifiable if any is, else verified'),
  kind: z.enum(['search', 'get', 'count', 'list']),
  collection: z.string(),
  block: z.number().int(),
  block_hash: z.string().nullable(),
  checks: z.array(
    z.object({
      check: z.string(),
      verdict,
      subject: z.string().optional(),
      evidence: z.string().optional().describe('Refuted: what the chain says instead'),
      reason: z.string().optional().describe('Unverifiable: why'),
      detail: z.record(z.string(), z.unknown()).optional(),
    }),
  ),
  cost: z.object({ calls: z.number().int(), requests: z.number().int(), ms: z.number() }),
};

export async function verify(ctx: ServiceContext, params: unknown): Promise<VerifyReport> {
  const args = validate(verifySchema, params);
  const rpc = ctx.verifyRpc;
  if (!rpc) throw new InvalidArgumentError('this node has no RPC to verify against (serve --verify-rpc URL)');
  const budget = ctx.chain.callBudget;
  // Started only while the bucket holds a call: a spent budget is the follower's, not the caller's to take.
  if (budget && budget.waitMs(1) > 0) throw budgetSpent(budget);
  const client = verifierRpc(rpc.url, rpc.headers);
  const counted = budget ? spending(client, budget) : undefined;
  let report: VerifyReport;
  try {
    report = await verifyAnswer({
      rpc: counted ?? client,
      collection: args.collection,
      answer: args.answer,
      request: args.request,
    });
  } catch (error) {
    if (error instanceof VerifyInputError) throw new InvalidArgumentError(`answer: ${error.message}`);
    throw error;
  }
  // A call the budget refused left a check unread: the answer is not judged on half the evidence.
  if (budget && counted?.refused) throw budgetSpent(budget);
  return report;
}

/** The refusal of a verification while the node's call budget is spent, with when it holds a call again. */
function budgetSpent(budget: CallBudget): ArkivectorError {
  const retryAfter = Math.max(1, Math.ceil(budget.waitMs(1) / 1000));
  return new ArkivectorError(
    'rate_limited',
    `the node's call budget (--rpc-budget ${budget.callsPerHour} calls an hour) is spent: arkivector_verify reads the chain within it; retry in ${retryAfter} s`,
    { meta: { retry_after: retryAfter, rpc_budget: { calls_per_hour: budget.callsPerHour } } },
  );
}

/**
 * `client` with every call spent from `budget`, none waiting for it. Once started, a verification may leave
 * the bucket at most one bucket short (the follower's next poll moves by at most that); a call past that is
 * refused (and `refused` set) instead of made.
 */
function spending(client: VerifierRpc, budget: CallBudget): VerifierRpc & { readonly refused: boolean } {
  let refused = false;
  return {
    cost: client.cost,
    get refused() {
      return refused;
    },
    request<T>(method: string, params: unknown[]) {
      if (budget.trySpend(1, budget.burst) > 0) {
        refused = true;
        return Promise.reject(new Error(`the node's call budget (--rpc-budget ${budget.callsPerHour}) is spent`));
      }
      return client.request<T>(method, params);
    },
  };
}
