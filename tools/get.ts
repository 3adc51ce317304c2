// arkivector_get: one entity by id or key.
import { get, type GetResult } from '../src/service/index.ts';
import { getArgs, getResultShape } from '../src/service/schemas.ts';
import { defineTool } from './defineTool.ts';

export function renderGet(answer: GetResult): string {
  const e = answer.entity;
  const attributes = Object.entries(e.attributes)
    .map(([name, a]) => `${name}=${a.type === 'str' ? JSON.stringify(a.value) : String(a.value)}`)
    .join(' ');
  return [
    `${e.id} (key ${e.key}) as of block ${answer.as_of_block}, sync ${answer.sync_state}`,
    `owner ${e.owner}, ${e.expires_at_block === 'never' ? 'never expires (kept until deleted)' : `expires at block ${e.expires_at_block}`}`,
    ...(attributes ? [`attributes: ${attributes}`] : []),
    ...(e.document !== undefined ? [`document: ${e.document}`] : []),
  ].join('\n');
}

export const getTool = defineTool({
  name: 'arkivector_get',
  title: 'Get an entity',
  description:
    'Returns one live entity of a collection by its id or its 0x entity key: attributes, owner, expiry block and (with include_document) its document, with the block the answer reflects.',
  input: getArgs,
  output: getResultShape,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  needs: 'read',
  call: (ctx, args) => get(ctx, args),
  render: renderGet,
});
