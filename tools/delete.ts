// arkivector_delete (signer only): removes entities this node's signer owns; dry_run defaults to true.
import { deleteEntities, type DeleteResult } from '../src/service/index.ts';
import { deleteArgs, deleteResultShape } from '../src/service/schemas.ts';
import { defineTool } from './defineTool.ts';

export function renderDelete(answer: DeleteResult): string {
  const head = answer.dry_run
    ? `dry run: ${answer.results.length} entit${answer.results.length === 1 ? 'y' : 'ies'} would be deleted (call again with dry_run false)`
    : `${answer.results.length} entit${answer.results.length === 1 ? 'y' : 'ies'} deleted${answer.block_number === null ? ' (sent, not yet mined)' : ` in block ${answer.block_number}`}`;
  return [head, ...answer.results.map((r) => `- ${r.id} ${r.key}`)].join('\n');
}

export const deleteTool = defineTool({
  name: 'arkivector_delete',
  title: 'Delete vectors',
  description:
    "Deletes entities (by id or 0x key) that this node's wallet owns, in one on-chain transaction. dry_run defaults to true: it only lists what would be deleted; pass dry_run false to delete. Entities of other writers are refused (conflict).",
  input: deleteArgs,
  output: deleteResultShape,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  needs: 'write',
  call: (ctx, args, { progress }) => deleteEntities(ctx, args, progress),
  render: renderDelete,
});
