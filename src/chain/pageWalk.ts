// The cursor walk both generations' `arkiv_query` reads share: follow the node's cursor page by page, bounded
// in pages and time, and ask a page again with half as many entities when its answer is over the
// transport's size limit. Each driver only says how one page is asked and what its entities become.
import { ChainDataError, type PageOptions } from './source.ts';
import { RpcAnswerTooLargeError, type RpcTransport } from './transport.ts';

/** Pages a walk may take when the caller names no bound (a bound on hostile or runaway cursors). */
export const PAGE_WALK_MAX_PAGES = 1_000_000;

/** One page as a node answers it: its entities, and the cursor of the next page when more follow. */
export interface WalkPage<T> {
  data: T[];
  cursor?: string;
}

export interface PageWalk<T> {
  /** Names the walk in errors (the query text). */
  what: string;
  /** The node's most entities per page; the walk starts at `min(options.pageSize, this)`. */
  pageLimit: number;
  /** Asks one page of `size` entities after `cursor` (undefined for the first page). */
  ask: (size: number, cursor: string | undefined) => Promise<WalkPage<T>>;
  /** Receives each page in order, before the next is asked. */
  visit: (page: T[]) => void;
}

/**
 * Walks every page. A page may come back short (a node bounds the bytes of a page): the cursor, not the
 * page length, says whether more follow. A page over the answer size limit is asked again with half as
 * many entities, down to one, and the walk goes on at that size: the cursor names a position, not a page
 * size, on both generations (arkiv-gen-d.md §4.3), so the result is the same as an unsplit walk's.
 * `options.maxPages` ends the walk quietly after that many pages; without it, a walk that has not ended
 * within PAGE_WALK_MAX_PAGES pages, or one that runs past `options.maxMs`, throws ChainDataError.
 */
export async function walkPages<T>(walk: PageWalk<T>, options: PageOptions = {}): Promise<void> {
  let size = Math.max(1, Math.min(options.pageSize ?? walk.pageLimit, walk.pageLimit));
  const maxPages = options.maxPages ?? PAGE_WALK_MAX_PAGES;
  const deadline = options.maxMs === undefined ? Infinity : Date.now() + options.maxMs;
  let cursor: string | undefined;
  for (let page = 0; page < maxPages; page++) {
    if (Date.now() > deadline)
      throw new ChainDataError(`arkiv_query "${walk.what}" did not finish within ${options.maxMs} ms`);
    let result: WalkPage<T> | undefined;
    while (result === undefined) {
      await options.beforeCall?.();
      try {
        result = await walk.ask(size, cursor);
      } catch (error) {
        if (!(error instanceof RpcAnswerTooLargeError) || size === 1) throw error;
        size = Math.max(1, size >> 1);
      }
    }
    if (!Array.isArray(result?.data)) throw new ChainDataError('arkiv_query answered without a data list');
    walk.visit(result.data);
    if (!result.cursor || result.data.length === 0 || page + 1 === options.maxPages) return;
    cursor = result.cursor;
  }
  throw new ChainDataError(`arkiv_query "${walk.what}" did not finish within ${maxPages} pages`);
}

/**
 * walkPages over `arkiv_query(query, {...pageOptions(size), cursor})`: a driver names its page options
 * (block, fields, page size in its own spelling) and the node's page limit.
 */
export function walkQuery<T>(
  transport: RpcTransport,
  query: string,
  pageLimit: number,
  pageOptions: (size: number) => Record<string, unknown>,
  visit: (page: T[]) => void,
  options?: PageOptions,
): Promise<void> {
  const ask = (size: number, cursor: string | undefined) =>
    transport.request<WalkPage<T>>('arkiv_query', [query, { ...pageOptions(size), ...(cursor ? { cursor } : {}) }]);
  return walkPages({ what: query, pageLimit, ask, visit }, options);
}

/**
 * `read(items)` for a batch whose answer may be over the transport's size limit: such a batch is read again
 * as two halves, down to one item (whose too-large answer is the caller's error), results in item order.
 */
export async function readInHalves<I, R>(
  items: readonly I[],
  read: (part: readonly I[]) => Promise<R[]>,
): Promise<R[]> {
  try {
    return await read(items);
  } catch (error) {
    if (!(error instanceof RpcAnswerTooLargeError) || items.length <= 1) throw error;
    const middle = Math.ceil(items.length / 2);
    return [...(await readInHalves(items.slice(0, middle), read)), ...(await readInHalves(items.slice(middle), read))];
  }
}
