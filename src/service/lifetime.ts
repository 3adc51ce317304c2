// How long what this node writes lives, said once for every surface: an entity written without a ttl into a
// collection without default_ttl, and a definition written without a ttl, are kept until deleted (an agent's
// memory lasts until it is forgotten). The DB-chain has permanent entities; v1 has none, and its writer puts
// its longest lifetime instead (V1_UNTIL_DELETED_BTL). A `default_ttl` already on chain keeps its meaning.
import { PERMANENT_BTL, V1_UNTIL_DELETED_BTL } from '../chain/index.ts';
import { ttlToBlocks, type Ttl } from '../collections/index.ts';

/** `expires_at_block` of an entity that never expires. */
export const NEVER = 'never' as const;

/** Blocks to live for a write: the ttl given, else the collection's default, else until deleted. */
export function lifetimeBtl(...ttls: (Ttl | undefined)[]): bigint {
  const ttl = ttls.find((t) => t !== undefined);
  return ttl === undefined ? PERMANENT_BTL : BigInt(ttlToBlocks(ttl));
}

/** An entity's expiry as answers give it: the block number, or "never" for a permanent entity. */
export const expiresAtBlock = (expiresAt: bigint): number | typeof NEVER =>
  expiresAt >= PERMANENT_BTL ? NEVER : Number(expiresAt);

/**
 * The expiry a write will give an entity applied at `block`: `block + btl`, and on the DB-chain never less
 * than the entity's current expiry (an update there never shortens a life).
 */
export function expiryAfterWrite(
  protocol: string | undefined,
  btl: bigint,
  block: number,
  current?: bigint,
): number | typeof NEVER {
  if (protocol === 'v1') return Number(BigInt(block) + (btl === PERMANENT_BTL ? V1_UNTIL_DELETED_BTL : btl));
  if (btl === PERMANENT_BTL) return NEVER;
  const target = BigInt(block) + btl;
  return expiresAtBlock(current !== undefined && current > target ? current : target);
}

/** What a memory written without a ttl lives on this chain, for /v1/status and the MCP instructions. */
export interface MemoryLifetime {
  /** "never": kept until deleted; a number: blocks to live (v1's longest lifetime). */
  without_ttl: typeof NEVER | number;
  /** One sentence on what that costs on a real chain. */
  cost: string;
}

export function memoryLifetime(protocol: string | undefined): MemoryLifetime {
  return protocol === 'v1'
    ? {
        without_ttl: Number(V1_UNTIL_DELETED_BTL),
        cost: 'Arkiv v1 has no permanent entities: a memory without ttl lives 100 years (v1 does not price lifetime; each write is one transaction paid by the signer). Pass ttl for memories that should lapse; arkivector_delete forgets.',
      }
    : {
        without_ttl: NEVER,
        cost: 'A memory without ttl is permanent on the DB-chain (expiresAt 2^64-1): each write is one transaction paid by the signer (its gas grows with the document; the current schedule does not price lifetime), and it stays on chain, and in every node that follows it, until deleted. Pass ttl for memories that should lapse; arkivector_delete forgets.',
      };
}
