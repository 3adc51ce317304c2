// arkivector_count: exact count of live entities passing an optional filter.
import { count, type CountResult } from '../src/service/index.ts';
import { countArgs, countResultShape } from '../src/service/schemas.ts';
import { defineTool } from './defineTool.ts';

export const renderCount = (answer: CountResult) =>
  `${answer.count} entities as of block ${answer.as_of_block} (sync ${answer.sync_state})`;

export const countTool = defineTool({
  name: 'arkivector_count',
  title: 'Count entities',
  description:
    'Counts (exactly) the live entities of a collection, optionally only those passing where (Arkiv syntax) and/or filter (JSON), as of the block in as_of_block.',
  input: countArgs,
  output: countResultShape,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  needs: 'read',
  call: (ctx, args) => count(ctx, args),
  render: renderCount,
});
