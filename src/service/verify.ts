// verify: checks an answer another node gave against the chain through the RPC this node trusts
// (--verify-rpc, or a stdio node's own), with src/verify/: a verdict per check. Completeness stays within
// the default bound here: a caller of a public node must not make it read a large collection per call.
import { z } from 'zod';
import {
  VERIFY_COMPLETE_MAX,
  verifierRpc,
  verifyAnswer,
  VerifyInputError,
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
  try {
    return await verifyAnswer({
      rpc: verifierRpc(rpc.url, rpc.headers),
      collection: args.collection,
      answer: args.answer,
      request: args.request,
    });
  } catch (error) {
    if (error instanceof VerifyInputError) throw new InvalidArgumentError(`answer: ${error.message}`);
    throw error;
  }
}
