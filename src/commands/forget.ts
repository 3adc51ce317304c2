// `arkivector forget COLLECTION --where …`: delete every entity of the gateway's signer that passes a
// filter. Without --yes it is a dry run that says what a real run would remove.
import { DELETE_BY_FILTER_MAX } from '../service/limits.ts';
import { type CommandSpec, type Io, parseWait, runCommand, UsageError, WAIT_FLAG } from './command.ts';
import { FILTER_FLAGS, filterArguments } from './filterFlags.ts';

/** Entities named in text output (--json has them all). */
const SHOWN_RESULTS = 20;

export const forgetSpec: CommandSpec = {
  name: 'forget',
  operands: 'COLLECTION',
  summary:
    "Delete the entities passing --where/--filter that the gateway's signer owns (others are skipped and " +
    'counted). A dry run unless --yes: it prints how many entities and transactions a real run would take.',
  details: [
    `At most ${DELETE_BY_FILTER_MAX} entities per call (the rest are reported as remaining: run it again).`,
    'Examples:',
    '  arkivector forget memories --where "topic = \'trip\'"          # dry run',
    '  arkivector forget memories --where "topic = \'trip\'" --yes    # delete',
  ].join('\n'),
  flags: {
    ...FILTER_FLAGS,
    yes: { type: 'boolean', short: 'y', description: 'delete for real (default: dry run)' },
    wait: WAIT_FLAG,
  },
};

export function runForget(args: string[], io: Io): Promise<number> {
  return runCommand(forgetSpec, args, io, async ({ client, values, positionals, json }) => {
    const [collection, ...extra] = positionals;
    if (collection === undefined || extra.length) throw new UsageError('forget takes one COLLECTION');
    const filters = filterArguments(values);
    if (filters.where === undefined && filters.filter === undefined)
      throw new UsageError('forget needs --where or --filter');
    const answer = await client.deleteWhere(collection, {
      ...filters,
      dry_run: values.yes !== true,
      wait: parseWait(values.wait),
    });
    if (json) return void io.stdout.write(`${JSON.stringify(answer)}\n`);
    const n = answer.results.length;
    const txs = answer.transactions;
    const what = `${n} entit${n === 1 ? 'y' : 'ies'} in ${txs} transaction${txs === 1 ? '' : 's'}`;
    const lines = [
      answer.dry_run
        ? `dry run: would delete ${what} (run again with --yes to delete)`
        : `deleted ${what}${answer.block_number != null ? `, last in block ${answer.block_number}` : ''}`,
      `${answer.matched} matched at block ${answer.as_of_block}`,
      ...(answer.skipped as { reason: string; count: number }[]).map(
        (s) => `${s.count} skipped: ${s.reason === 'not_owner' ? "another writer's" : s.reason}`,
      ),
      ...(answer.remaining ? [`${answer.remaining} more remain beyond the per-call maximum: run again`] : []),
      ...(answer.results as { id: string }[]).slice(0, SHOWN_RESULTS).map((r) => `- ${r.id}`),
      ...(n > SHOWN_RESULTS ? [`… and ${n - SHOWN_RESULTS} more`] : []),
    ];
    io.stdout.write(`${lines.join('\n')}\n`);
  });
}
