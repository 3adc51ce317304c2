// arkivector_delete (signer only): removes entities this node's signer owns; dry_run defaults to true.
import { deleteEntities, type DeleteResult } from '../src/service/index.ts';
import { DELETES_PER_TX } from '../src/service/delete.ts';
import { DELETE_BY_FILTER_MAX } from '../src/service/limits.ts';
import { deleteArgs, deleteResultShape } from '../src/service/schemas.ts';
import { defineTool } from './defineTool.ts';

/** Entities named in the text block (structuredContent lists them all). */
const SHOWN_RESULTS = 20;

export function renderDelete(answer: DeleteResult): string {
  const n = answer.results.length;
  const entities = `${n} entit${n === 1 ? 'y' : 'ies'}`;
  const txs = answer.transactions ?? answer.tx_hashes.length;
  const transactions = `${txs} transaction${txs === 1 ? '' : 's'}`;
  const head = answer.dry_run
    ? `dry run: ${entities} would be deleted in ${transactions} (call again with dry_run false)`
    : answer.block_number === null
      ? `delete of ${entities} sent in ${transactions}, not yet mined`
      : `${entities} deleted in ${transactions}, last in block ${answer.block_number}`;
  const notes = [
    ...(answer.matched !== undefined ? [`${answer.matched} matched the filter at block ${answer.as_of_block}`] : []),
    ...(answer.skipped ?? []).map(
      (s) => `${s.count} skipped (${s.reason === 'not_owner' ? 'owned by another writer' : s.reason})`,
    ),
    ...(answer.remaining ? [`${answer.remaining} more of this signer's beyond the per-call maximum: call again`] : []),
  ];
  const shown = answer.results.slice(0, SHOWN_RESULTS).map((r) => `- ${r.id} ${r.key}`);
  if (n > SHOWN_RESULTS) shown.push(`… and ${n - SHOWN_RESULTS} more`);
  return [head, ...notes, ...shown].join('\n');
}

export const deleteTool = defineTool({
  name: 'arkivector_delete',
  title: 'Delete vectors',
  description: `Deletes entities that this node's wallet owns: by refs (ids or 0x keys; one transaction; another writer's entity is a conflict) or by where/filter (every matching entity of this wallet, up to ${DELETE_BY_FILTER_MAX} per call, batched ${DELETES_PER_TX} per transaction; other writers' entities are skipped and counted). dry_run defaults to true: it only reports what would be deleted and in how many transactions; pass dry_run false to delete.`,
  input: deleteArgs,
  output: deleteResultShape,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  needs: 'write',
  call: (ctx, args, { progress }) => deleteEntities(ctx, args, progress),
  render: renderDelete,
});
