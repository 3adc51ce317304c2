// Which collection definitions a node follows when anyone may write them: at most `perCreator` per creator
// and `total` in all. The places are shared out in rounds (every creator's first definition, then every
// creator's second, …; within a round by creation position), so one party filling the node-wide cap with its
// own definitions gives way to each newcomer's first: to lock a newcomer out it needs `total` funded keys.
// Depends only on chain data (creators, creation positions, keys), so every node at a block agrees.
import type { Address, Hex } from 'viem';

/** How many definition entities a node follows: per creator, and in all (see DEFINITIONS_PER_CREATOR_MAX). */
export interface DefinitionCap {
  readonly perCreator: number;
  readonly total: number;
}

/** Why a node does not follow (or would not follow) a definition. */
export type DefinitionRefusal =
  | { readonly reason: 'per_creator_cap' | 'total_cap'; readonly limit: number }
  | { readonly reason: 'not_followed' }
  | { readonly reason: 'pinned'; readonly owner: Address };

/** What admission needs of a definition entity. */
export interface Contender {
  readonly key: Hex;
  /** Who it counts against: its creator (the owner only when the chain did not say). */
  readonly creator: Address;
}

export interface Admission {
  readonly admitted: ReadonlySet<Hex>;
  readonly refused: ReadonlyMap<Hex, DefinitionRefusal>;
  /** Live definitions per creator, over the cap included. */
  readonly created: ReadonlyMap<Address, number>;
}

/** `contenders` in creation order (earliest first). */
export function admitDefinitions(contenders: readonly Contender[], cap: DefinitionCap): Admission {
  const created = new Map<Address, number>();
  // rounds[r]: the (r+1)-th definition of each creator, in creation order (contenders are).
  const rounds: Contender[][] = [];
  const refused = new Map<Hex, DefinitionRefusal>();
  for (const contender of contenders) {
    const rank = created.get(contender.creator) ?? 0;
    created.set(contender.creator, rank + 1);
    if (rank >= cap.perCreator) refused.set(contender.key, { reason: 'per_creator_cap', limit: cap.perCreator });
    else (rounds[rank] ??= []).push(contender);
  }
  const admitted = new Set<Hex>();
  for (const round of rounds)
    for (const contender of round) {
      if (admitted.size < cap.total) admitted.add(contender.key);
      else refused.set(contender.key, { reason: 'total_cap', limit: cap.total });
    }
  return { admitted, refused, created };
}

/**
 * Whether a definition `creator` writes next (created after every live one) would be admitted beside the
 * live ones counted in `created`: undefined when it would, else the cap that refuses it.
 */
export function refusalOfNext(
  created: ReadonlyMap<Address, number>,
  creator: Address,
  cap: DefinitionCap,
): DefinitionRefusal | undefined {
  const own = created.get(creator) ?? 0;
  if (own >= cap.perCreator) return { reason: 'per_creator_cap', limit: cap.perCreator };
  // It would be the last of round own + 1: everyone's definitions of that round and before come first.
  let ahead = own;
  for (const [other, count] of created) if (other !== creator) ahead += Math.min(count, own + 1, cap.perCreator);
  return ahead < cap.total ? undefined : { reason: 'total_cap', limit: cap.total };
}
