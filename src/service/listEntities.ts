// list_entities: browse a collection page by page (mem0's get_all, Chroma's get, Qdrant's scroll), newest
// first by default, every page of one listing answered from the block of its first page.
//
// Why listings are kept: the stores only hold the last applied block, so a later page cannot be computed
// for an older block. The first page computes the whole ordered listing (it is needed for `total`
// anyway) and, when there are more pages, keeps it for LIST_PINNED_TTL_MS (at most LIST_PINNED_MAX
// listings per node). A later page reads that listing, or recomputes it when the node is still at the
// cursor's block (another node behind a load balancer at the same block answers the same page); otherwise
// the cursor has expired. Positions are (last-modified block, entity key), so pages never depend on
// anything but the chain.
import { createHash } from 'node:crypto';
import { ENTITY_KEY_FORM_REGEX } from '../collections/index.ts';
import type { ReadableStore, RecordSummary, ServiceContext } from './context.ts';
import { InvalidArgumentError } from './errors.ts';
import { LIST_PINNED_MAX, LIST_PINNED_TTL_MS } from './limits.ts';
import { entityOf } from './render.ts';
import { type ListEntitiesParameters, type ListEntitiesResult, listEntitiesSchema } from './schemas.ts';
import { validate } from './validate.ts';
import { collectionIn, readView } from './view.ts';
import type { PublishedCollection } from '../../indexer/index.ts';

export type { ListEntitiesParameters, ListEntitiesResult };

type Order = 'newest' | 'oldest';
type Listed = { record: RecordSummary; block: number };

interface Listing {
  entries: readonly Listed[];
  /** The hash of the listing's block, named by every page of it. */
  hash: string | null;
  keptUntil: number;
  /** The indexer's reorg count when it was taken: after a reorg its block may hold other entities. */
  reorgs: number;
}

/** What a cursor carries: version, block, position (last-modified block and key of the last entity
 * shown) and a fingerprint of the query it continues. */
interface Cursor {
  v: 1;
  b: number;
  m: number;
  k: string;
  q: string;
}

const FINGERPRINT_FORM = /^[0-9a-f]{16}$/;

const listings = new WeakMap<ServiceContext, Map<string, Listing>>();

function kept(ctx: ServiceContext): Map<string, Listing> {
  let map = listings.get(ctx);
  if (!map) listings.set(ctx, (map = new Map()));
  return map;
}

/** Identifies the query a cursor belongs to: collection (its definition too), filters and order. */
function fingerprint(c: PublishedCollection<ReadableStore>, args: { where?: string; filter?: unknown; order: Order }) {
  return createHash('sha256')
    .update(JSON.stringify([c.name, c.definitionKey, args.where ?? null, args.filter ?? null, args.order]))
    .digest('hex')
    .slice(0, 16);
}

const cursorExpired = (block: number) =>
  new InvalidArgumentError(
    `cursor expired: this node no longer holds the listing of block ${block} (listings are kept ${LIST_PINNED_TTL_MS / 60_000} minutes); list again without cursor`,
    [{ path: 'cursor', message: 'expired' }],
  );

const badCursor = (why: string) => new InvalidArgumentError(`cursor: ${why}`, [{ path: 'cursor', message: why }]);

const foreignCursor = () =>
  badCursor('it continues another listing: repeat the collection, where, filter and order of its first page');

export function encodeCursor(cursor: Omit<Cursor, 'v'>): string {
  return Buffer.from(JSON.stringify({ v: 1, ...cursor })).toString('base64url');
}

/** Parses a cursor; anything but one this node could have made is invalid_argument. */
export function decodeCursor(text: string): Cursor {
  if (!/^[A-Za-z0-9_-]+$/.test(text)) throw badCursor('not a cursor of this API (base64url expected)');
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw badCursor('not a cursor of this API');
  }
  const c = value as Partial<Cursor> | null;
  const isBlock = (n: unknown) => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
  if (
    typeof c !== 'object' ||
    c === null ||
    Array.isArray(c) ||
    Object.keys(c).length !== 5 ||
    c.v !== 1 ||
    !isBlock(c.b) ||
    !isBlock(c.m) ||
    typeof c.k !== 'string' ||
    !ENTITY_KEY_FORM_REGEX.test(c.k) ||
    // Cursors carry keys as the chain spells them (lower case), which is also the order they page by.
    c.k !== c.k.toLowerCase() ||
    typeof c.q !== 'string' ||
    !FINGERPRINT_FORM.test(c.q) ||
    (c.m as number) > (c.b as number)
  )
    throw badCursor('not a cursor of this API');
  return c as Cursor;
}

/** Orders newest first (last-modified block, then key, both descending) or the reverse. */
function compare(order: Order): (a: Listed, b: Listed) => number {
  const sign = order === 'newest' ? -1 : 1;
  return (a, b) =>
    sign * (a.block - b.block || (a.record.key < b.record.key ? -1 : a.record.key > b.record.key ? 1 : 0));
}

/** Whole ordered listing of the store as it is now (call synchronously with reading the view). */
export function listingOf(
  c: PublishedCollection<ReadableStore>,
  filters: { where?: string; filter?: unknown },
  order: Order,
): Listed[] {
  const entries = c.store
    .select(filters)
    .map((record) => ({ record, block: c.lastModifiedAt(record.id, record.key) ?? 0 }));
  return entries.sort(compare(order));
}

/** First index after the position (block, key) in the listing's order. */
function after(entries: readonly Listed[], order: Order, block: number, key: string): number {
  const cmp = compare(order);
  const probe = { record: { key } as Listed['record'], block };
  let lo = 0;
  let hi = entries.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const entry = entries[mid];
    if (entry !== undefined && cmp(entry, probe) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const reorgsOf = (ctx: ServiceContext) => ctx.indexer.counters?.reorgs ?? 0;

function keep(ctx: ServiceContext, id: string, entries: readonly Listed[], hash: string | null): void {
  const map = kept(ctx);
  const now = Date.now();
  for (const [k, l] of map) if (l.keptUntil <= now) map.delete(k);
  map.delete(id);
  for (const oldest of map.keys()) {
    if (map.size < LIST_PINNED_MAX) break;
    map.delete(oldest);
  }
  map.set(id, { entries, hash, keptUntil: now + LIST_PINNED_TTL_MS, reorgs: reorgsOf(ctx) });
}

export async function listEntities(ctx: ServiceContext, params: unknown): Promise<ListEntitiesResult> {
  const args = validate(listEntitiesSchema, params);
  const cursor = args.cursor === undefined ? undefined : decodeCursor(args.cursor);
  const filters = { where: args.where, filter: args.filter };
  // A cursor of another query is refused before any wait for its block.
  if (cursor) {
    const now = collectionIn((await readView(ctx))(), args.collection);
    if (cursor.q !== fingerprint(now, { ...filters, order: args.order })) throw foreignCursor();
  }
  // A later page needs the node at (or past) the cursor's block: behind a load balancer, a node that is
  // behind waits for it like for min_block.
  const minBlock = Math.max(args.min_block ?? 0, cursor?.b ?? 0);
  const view = (await readView(ctx, minBlock || args.min_block))();
  const c = collectionIn(view, args.collection);
  const q = fingerprint(c, { ...filters, order: args.order });
  let block = view.as_of_block;
  let hash = view.as_of_block_hash;
  let entries: readonly Listed[];
  let start = 0;
  if (cursor) {
    if (cursor.q !== q) throw foreignCursor();
    const id = `${q}:${cursor.b}`;
    const listing = kept(ctx).get(id);
    if (listing && listing.keptUntil > Date.now() && listing.reorgs === reorgsOf(ctx)) {
      entries = listing.entries;
      hash = listing.hash;
    } else if (cursor.b === view.as_of_block) {
      entries = listingOf(c, filters, args.order);
      keep(ctx, id, entries, hash);
    } else throw cursorExpired(cursor.b);
    block = cursor.b;
    start = after(entries, args.order, cursor.m, cursor.k);
  } else {
    entries = listingOf(c, filters, args.order);
  }
  const page = entries.slice(start, start + args.limit);
  const more = start + page.length < entries.length;
  if (more && !cursor) keep(ctx, `${q}:${block}`, entries, hash);
  const last = page.at(-1);
  return {
    as_of_block: block,
    as_of_block_hash: hash,
    sync_state: view.sync_state,
    order: args.order,
    total: entries.length,
    entities: page.map(({ record, block: modified }) => ({
      ...entityOf(record, c.definition, args.include_document),
      last_modified_block: modified,
    })),
    next_cursor: more && last ? encodeCursor({ b: block, m: last.block, k: last.record.key, q }) : null,
  };
}
