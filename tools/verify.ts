// arkivector_verify: checks an answer another node gave against the chain (listed on nodes that have an
// RPC to trust: --verify-rpc, or a stdio node's own chain).
import { verify } from '../src/service/index.ts';
import { verifyArgs, verifyResultShape } from '../src/service/verify.ts';
import type { VerifyReport } from '../src/verify/index.ts';
import { defineTool } from './defineTool.ts';

export function renderVerify(report: VerifyReport): string {
  const failed = report.checks.filter((c) => c.verdict !== 'verified');
  return [
    `${report.verdict}: ${report.kind} answer of ${report.collection} at block ${report.block}, ${report.checks.length} checks (${report.cost.calls} RPC calls)`,
    ...failed.map(
      (c) => `- ${c.verdict} ${c.check}${c.subject ? ` ${c.subject}` : ''}: ${c.evidence ?? c.reason ?? ''}`,
    ),
  ].join('\n');
}

export const verifyTool = defineTool({
  name: 'arkivector_verify',
  title: 'Verify an answer against the chain',
  description:
    "Checks an answer another arkivector node gave (search, get, count or list_entities: pass its structured content as answer and your arguments as request) against the chain through this node's RPC, without trusting that node: the block and its hash, each result (entity, fields, filter, distance), the order, and completeness for small collections. Every check has a verdict: verified, refuted (with the chain's evidence) or unverifiable (with why).",
  input: verifyArgs,
  output: verifyResultShape,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  needs: 'read',
  available: (ctx) => ctx.verifyRpc !== undefined,
  call: (ctx, args) => verify(ctx, args),
  render: renderVerify,
});
