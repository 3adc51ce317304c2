// A create must not be acknowledged for a collection this node will not serve: the node's caps on
// followed definitions (DEFINITIONS_PER_CREATOR_MAX, DEFINITIONS_MAX), --collections and --collection-owner
// are checked before signing, and, with `wait: "indexed"`, the indexed definition is checked to be the one
// served (a cap can fill between the two).
import type { DefinitionRefusal } from '../../indexer/index.ts';
import type { ServiceContext } from './context.ts';
import { ConflictError } from './errors.ts';

const WAY_OUT = (name: string, signer: string) =>
  `a node started with --collections ${name} or --collection-owner ${name}=${signer} follows it whatever the caps`;

function why(refusal: DefinitionRefusal, name: string, signer: string): string {
  switch (refusal.reason) {
    case 'per_creator_cap':
      return `this node follows at most ${refusal.limit} collection definitions created by one address (DEFINITIONS_PER_CREATOR_MAX) and ${signer} has that many: delete one of its collections, or ${WAY_OUT(name, signer)}`;
    case 'total_cap':
      return `this node's cap of ${refusal.limit} followed collection definitions (DEFINITIONS_MAX) is full with other creators' definitions: ${WAY_OUT(name, signer)}`;
    case 'not_followed':
      return `this node follows only the collections it was started with (--collections), not ${name}`;
    case 'pinned':
      return `this node follows only ${refusal.owner}'s definition of ${name} (--collection-owner)`;
  }
}

const meta = (refusal: DefinitionRefusal, name: string) => ({
  collection: name,
  refused_by: refusal.reason,
  ...('limit' in refusal ? { limit: refusal.limit } : {}),
});

/** Refuses (conflict) a definition of `name` by `signer` that this node would not follow, before signing. */
export function refuseUnfollowed(ctx: ServiceContext, name: string, signer: string): void {
  const refusal = ctx.indexer.refusalOfNextDefinition?.(signer, name);
  if (refusal)
    throw new ConflictError(`collection ${name} not created: ${why(refusal, name, signer)}`, meta(refusal, name));
}

/**
 * After `wait: "indexed"`: refuses (conflict) when the node does not serve the definition `key` just written
 * under `name`, saying which cap refused it; the definition is on chain, so the answer names it.
 */
export function refuseUnserved(
  ctx: ServiceContext,
  name: string,
  signer: string,
  written: { key: string; hash: string; block: number | null },
): void {
  const served = ctx.indexer.collections.get(name);
  const key = written.key.toLowerCase();
  if (served?.definitionKey.toLowerCase() === key) return;
  const unfollowed = ctx.indexer.refusalOfNextDefinition?.(signer, name);
  const refusal =
    ctx.indexer.definitionRefusal?.(key) ??
    (unfollowed?.reason === 'not_followed' || unfollowed?.reason === 'pinned' ? unfollowed : undefined);
  const reason = refusal
    ? why(refusal, name, signer)
    : served
      ? `${served.owner}'s earlier definition of ${name} is served`
      : 'the definition is not live at the indexed block';
  throw new ConflictError(
    `collection ${name} was written (definition ${written.key}, transaction ${written.hash}) but this node does not serve it: ${reason}`,
    {
      ...(refusal ? meta(refusal, name) : { collection: name }),
      definition_key: written.key,
      tx_hash: written.hash,
      block_number: written.block,
    },
  );
}
