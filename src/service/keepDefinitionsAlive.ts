// keep definitions alive: a write daemon extends the collection definitions its signer owns before they
// expire (docs/tools.md, "Creating collections"), so its collections do not vanish from every node. Run periodically by serve.
import type { Hex } from 'viem';
import { ttlToBlocks } from '../collections/index.ts';
import { emptyBatch } from '../chain/index.ts';
import type { ServiceContext } from './context.ts';
import { requireWriter, submit } from './submit.ts';
import { readView } from './view.ts';

/** Extend when fewer than this many blocks are left (30 days at 2 s blocks)… */
export const KEEPALIVE_HORIZON_BLOCKS = ttlToBlocks({ days: 30 });
/** …by this many blocks (a year). */
export const KEEPALIVE_EXTEND_BLOCKS = ttlToBlocks({ days: 365 });

export async function keepDefinitionsAlive(
  ctx: ServiceContext,
  options: { horizonBlocks?: number; extendBlocks?: number } = {},
): Promise<{ extended: { collection: string; key: string; expires_at_block: number }[]; tx_hashes: string[] }> {
  const writer = requireWriter(ctx);
  const horizon = BigInt(options.horizonBlocks ?? KEEPALIVE_HORIZON_BLOCKS);
  const by = BigInt(options.extendBlocks ?? KEEPALIVE_EXTEND_BLOCKS);
  const view = (await readView(ctx))();
  const due = [...view.collections.values()].filter(
    (c) => c.owner === writer.address && c.definitionExpiresAt - BigInt(view.as_of_block) < horizon,
  );
  if (!due.length) return { extended: [], tx_hashes: [] };
  const ops = {
    ...emptyBatch(),
    extends: due.map((c) => ({ entityKey: c.definitionKey as Hex, numberOfBlocks: by })),
  };
  const { hash } = await submit(ctx, ops, 'receipt');
  return {
    extended: due.map((c) => ({
      collection: c.name,
      key: c.definitionKey,
      expires_at_block: Number(c.definitionExpiresAt + by),
    })),
    tx_hashes: [hash],
  };
}
