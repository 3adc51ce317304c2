// The --where / --filter flags shared by `entities` and `forget` (the same as `search`'s).
import { type FlagSpec, UsageError } from './command.ts';

export const FILTER_FLAGS: Record<'where' | 'filter', FlagSpec> = {
  where: { type: 'string', arg: 'EXPR', description: 'Arkiv query filter, e.g. "topic = \'pets\' && stars >= 4"' },
  filter: {
    type: 'string',
    arg: 'JSON',
    description: 'JSON filter, e.g. \'{"eq": {"topic": "pets"}}\' (ANDed with --where)',
  },
};

/** The where/filter arguments of a request, from the flags. */
export function filterArguments(values: Record<string, unknown>): { where?: string; filter?: unknown } {
  const out: { where?: string; filter?: unknown } = {};
  if (values.where !== undefined) out.where = values.where as string;
  if (values.filter !== undefined) {
    try {
      out.filter = JSON.parse(values.filter as string);
    } catch {
      throw new UsageError('--filter must be JSON, e.g. \'{"eq": {"topic": "pets"}}\'');
    }
  }
  return out;
}
