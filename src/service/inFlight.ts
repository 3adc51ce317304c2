// Writes of this node's signer that are sent but not yet indexed here, by the names they write
// (collection + id, or a collection definition). A second write of the same name waits for the first
// before it reads the store, so two upserts of one new id make one entity (created, then updated) rather
// than two. Check and registration happen in one synchronous step: nothing can slip in between.
import type { ChainWriter } from '../chain/index.ts';

const inFlight = new WeakMap<ChainWriter, Map<string, Promise<void>>>();

function table(writer: ChainWriter): Map<string, Promise<void>> {
  let t = inFlight.get(writer);
  if (!t) inFlight.set(writer, (t = new Map()));
  return t;
}

export const entityName = (collection: string, id: string) => `entity\u0000${collection}\u0000${id}`;
export const definitionName = (collection: string) => `definition\u0000${collection}`;

/** Passes of waiting for other writes of the same names (each pass waits for one of them to settle). */
const CLAIM_MAX_PASSES = 100;

/**
 * Waits until none of `names` is in flight, then marks them in flight (in the same synchronous step as
 * the last check). Each wait is bounded by the other write's receipt and indexing timeouts.
 * @returns release: call it exactly once, with the write's `settled` promise, or with nothing when the
 *   write did not go out
 */
export async function claim(writer: ChainWriter, names: readonly string[]): Promise<(settled?: Promise<void>) => void> {
  const t = table(writer);
  for (let pass = 0; pass < CLAIM_MAX_PASSES; pass++) {
    const busy = names.map((n) => t.get(n)).filter((p): p is Promise<void> => p !== undefined);
    if (!busy.length) break;
    await Promise.all(busy);
  }
  let done!: () => void;
  const mine = new Promise<void>((resolve) => (done = resolve));
  for (const n of names) t.set(n, mine);
  void mine.then(() => {
    for (const n of names) if (t.get(n) === mine) t.delete(n);
  });
  return (settled) => void (settled ?? Promise.resolve()).then(done);
}
