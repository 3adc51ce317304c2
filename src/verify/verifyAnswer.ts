// verifyAnswer: checks an arkivector read answer (search, get, count, list) against the chain through one
// JSON-RPC endpoint the caller trusts, never trusting the node that gave it. The first batch reads the
// block's header, the collection's definitions and the returned ids' entities at the answer's block, and
// the collection's size; completeness then reads the whole collection when it is within the bound.
import type { Hex } from 'viem';
import { LIST_LIMIT_MAX, SEARCH_K_DEFAULT, SEARCH_K_MAX } from '../service/limits.ts';
import {
  definitionsQuery,
  idQueries,
  resolveDefinition,
  resolveVectors,
  vectorsQuery,
  type ResolvedDefinition,
  type VectorsAt,
} from './collectionAt.ts';
import { fieldMismatches, filterChecks, filterOf, winnerFor, type Claimed } from './entityChecks.ts';
import { VERIFY_COMPLETE_MAX, VERIFY_COMPLETE_MAX_RAISED } from './limits.ts';
import { listChecks } from './listChecks.ts';
import {
  BLOCK_UNAVAILABLE,
  blockAt,
  countAt,
  headNumber,
  isDbChain,
  queryAll,
  rpcErrorCode,
  verifierRpc,
  type Row,
  type VerifierRpc,
} from './rpc.ts';
import { completenessCheck, distanceCheck, orderCheck, type ShownResult } from './searchChecks.ts';
import { type AnswerKind, type Check, overall, VerifyInputError, type VerifyReport } from './types.ts';

/** The most entities one read answer shows (a listing page or a search's k). */
const SHOWN_MAX = Math.max(LIST_LIMIT_MAX, SEARCH_K_MAX);

export interface VerifyOptions {
  /** The JSON-RPC endpoint to trust (an URL), or a client of one. */
  rpc: string | VerifierRpc;
  collection: string;
  /** The REST request body (search, count, list: its where / filter / k / vector; get: may be omitted). */
  request?: Record<string, unknown> | undefined;
  /** The REST answer body. */
  answer: Record<string, unknown>;
  /**
   * Completeness is checked when the collection holds at most this many vector entities at the block
   * (default VERIFY_COMPLETE_MAX); `true` raises it to VERIFY_COMPLETE_MAX_RAISED.
   */
  complete?: number | boolean;
  /** The owner a node pins for this collection name (`serve --collection-owner`). */
  owner?: string;
}

function kindOf(answer: Record<string, unknown>): AnswerKind {
  if (Array.isArray(answer.results)) return 'search';
  if (answer.entity && typeof answer.entity === 'object') return 'get';
  if (typeof answer.count === 'number') return 'count';
  if (Array.isArray(answer.entities)) return 'list';
  throw new VerifyInputError('the answer is not a search, get, count or list answer of arkivector');
}

const settle = <T>(p: Promise<T>) =>
  p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );

export async function verifyAnswer(options: VerifyOptions): Promise<VerifyReport> {
  const started = Date.now();
  const rpc = typeof options.rpc === 'string' ? verifierRpc(options.rpc) : options.rpc;
  const { answer, collection } = options;
  const request = options.request ?? {};
  const kind = kindOf(answer);
  const block = answer.as_of_block;
  if (typeof block !== 'number' || !Number.isSafeInteger(block) || block < 0)
    throw new VerifyInputError('the answer has no as_of_block');
  const hash = typeof answer.as_of_block_hash === 'string' ? answer.as_of_block_hash.toLowerCase() : null;
  const shown = shownEntities(kind, answer);
  const bound =
    options.complete === true
      ? VERIFY_COMPLETE_MAX_RAISED
      : typeof options.complete === 'number'
        ? options.complete
        : VERIFY_COMPLETE_MAX;
  const report = (checks: Check[]): VerifyReport => ({
    verdict: overall(checks),
    kind,
    collection,
    block,
    block_hash: hash,
    checks,
    cost: { calls: rpc.cost.calls, requests: rpc.cost.requests, ms: Date.now() - started },
  });

  // One batch: everything below is asked in the same tick.
  const header = settle(blockAt(rpc, block));
  const head = settle(headNumber(rpc));
  const dbchain = settle(isDbChain(rpc));
  const definitions = settle(queryAll(rpc, definitionsQuery(collection), block));
  const byId = idQueries(collection, [...new Set(shown.map((s) => String(s.claimed.id)))]).map((q) =>
    settle(queryAll(rpc, q, block)),
  );
  const size = kind === 'get' ? undefined : settle(countAt(rpc, vectorsQuery(collection), block));

  const checks: Check[] = [];
  checks.push(blockCheck(await header, await head, block, hash));
  const protocol = await dbchain;
  if (protocol.ok && !protocol.value) {
    checks.push({
      check: 'chain',
      verdict: 'unverifiable',
      reason: 'the RPC speaks Arkiv v1: the verifier reads the DB-chain (typed historical arkiv_query) only',
    });
    return report(checks);
  }
  const defs = await definitions;
  if (!defs.ok) return report([...checks, unreadable(defs.error, block)]);
  const resolved = resolveDefinition(defs.value, options.owner);
  if (!resolved) {
    checks.push({
      check: 'collection',
      verdict: 'refuted',
      evidence: `no valid live definition of collection ${JSON.stringify(collection)} at block ${block}`,
    });
    return report(checks);
  }
  const rows: Row[] = [];
  for (const part of byId) {
    const settled = await part;
    if (!settled.ok) return report([...checks, unreadable(settled.error, block)]);
    rows.push(...settled.value);
  }
  const vectors = resolveVectors(rows, collection, resolved);
  checks.push(...entityChecks(shown, vectors, resolved, collection, block));
  checks.push(...filterChecks(request, resolved.definition, verifiedRecords(shown, vectors)));
  if (kind === 'get') {
    const ref = request.ref;
    const entity = answer.entity as Claimed;
    if (typeof ref === 'string' && ref !== entity.id && ref.toLowerCase() !== String(entity.key).toLowerCase())
      checks.push({ check: 'entity', verdict: 'refuted', evidence: `the request asked for ${ref}` });
    return report(checks);
  }

  // Completeness reads the whole collection at the block, within the bound.
  const counted = size ? await size : undefined;
  let all: VectorsAt | undefined;
  let why: string | undefined;
  if (!counted?.ok) why = `the RPC did not count the collection's entities (${describe(counted?.error)})`;
  else if (counted.value > bound)
    why = `the collection holds ${counted.value} vector entities at block ${block}, more than the bound ${bound} (raise it with --complete)`;
  else {
    const read = await settle(queryAll(rpc, vectorsQuery(collection), block));
    if (!read.ok) return report([...checks, unreadable(read.error, block)]);
    all = resolveVectors(read.value, collection, resolved);
  }
  const passing = all ? passingWinners(all, request, resolved) : undefined;
  if (kind === 'search') checks.push(...searchChecks(answer, request, shown, vectors, resolved, passing, why));
  else if (kind === 'count') {
    if (!passing) checks.push({ check: 'count', verdict: 'unverifiable', reason: why ?? 'unknown' });
    else
      checks.push(
        passing.length === answer.count
          ? { check: 'count', verdict: 'verified' }
          : {
              check: 'count',
              verdict: 'refuted',
              evidence: `${passing.length} entities pass the filter at block ${block}; the answer says ${answer.count}`,
            },
      );
  } else checks.push(...listChecks(answer, request, shown, passing, why));
  return report(checks);
}

export interface Shown {
  subject: string;
  claimed: Claimed;
}

function shownEntities(kind: AnswerKind, answer: Record<string, unknown>): Shown[] {
  const list =
    kind === 'search'
      ? (answer.results as unknown[])
      : kind === 'list'
        ? (answer.entities as unknown[])
        : kind === 'get'
          ? [answer.entity]
          : [];
  if (list.length > SHOWN_MAX)
    throw new VerifyInputError(
      `the answer holds ${list.length} entities; no answer of arkivector holds more than ${SHOWN_MAX}`,
    );
  return list.map((item, i) => {
    if (!item || typeof item !== 'object') throw new VerifyInputError(`item ${i + 1} of the answer is not an object`);
    const claimed = item as Claimed;
    const label = kind === 'get' ? 'entity' : kind === 'search' ? `result ${i + 1}` : `entity ${i + 1}`;
    return { subject: `${label} (${String(claimed.id)})`, claimed };
  });
}

function blockCheck(
  header: Awaited<ReturnType<typeof settle<Awaited<ReturnType<typeof blockAt>>>>>,
  head: Awaited<ReturnType<typeof settle<number>>>,
  block: number,
  hash: string | null,
): Check {
  if (!header.ok)
    return { check: 'block', verdict: 'unverifiable', reason: `the RPC failed: ${describe(header.error)}` };
  if (!header.value)
    return {
      check: 'block',
      verdict: 'refuted',
      evidence: `block ${block} does not exist on this chain${head.ok ? ` (its head is ${head.value})` : ''}`,
    };
  if (hash === null) return { check: 'block', verdict: 'unverifiable', reason: 'the answer names no as_of_block_hash' };
  if (header.value.hash !== (hash as Hex))
    return {
      check: 'block',
      verdict: 'refuted',
      evidence: `block ${block} of this chain is ${header.value.hash}; the answer names ${hash} (another chain, or a fork)`,
    };
  // Verified means true at that block; how far the chain has moved on since is the reader's to weigh.
  return { check: 'block', verdict: 'verified', ...(head.ok ? { detail: { head: head.value } } : {}) };
}

function describe(error: unknown): string {
  return error instanceof Error ? (error as { shortMessage?: string }).shortMessage || error.message : String(error);
}

function unreadable(error: unknown, block: number): Check {
  return {
    check: 'chain',
    verdict: 'unverifiable',
    reason:
      rpcErrorCode(error) === BLOCK_UNAVAILABLE
        ? `the RPC does not hold block ${block} (past its retention window)`
        : `the RPC failed: ${describe(error)}`,
  };
}

function entityChecks(
  shown: readonly Shown[],
  vectors: VectorsAt,
  resolved: ResolvedDefinition,
  name: string,
  block: number,
): Check[] {
  return shown.map(({ subject, claimed }) => {
    const found = winnerFor(claimed, vectors, name, block);
    if ('evidence' in found) return { check: 'entity', verdict: 'refuted', subject, evidence: found.evidence };
    const w = found.winner;
    const diffs = fieldMismatches(claimed, w.record, w.entity.lastModifiedAtBlock, resolved.definition, block);
    return diffs.length
      ? { check: 'entity', verdict: 'refuted', subject, evidence: diffs.join('; ') }
      : { check: 'entity', verdict: 'verified', subject };
  });
}

/** The chain records of the shown entities that are their ids' winners (the filter is checked on those). */
function verifiedRecords(shown: readonly Shown[], vectors: VectorsAt) {
  return shown.flatMap(({ subject, claimed }) => {
    const w = vectors.winners.get(String(claimed.id));
    return w && w.entity.key === String(claimed.key).toLowerCase() ? [{ subject, record: w.record }] : [];
  });
}

/** Every id's winner passing the request's filter (all of them without one; none if it does not compile). */
function passingWinners(all: VectorsAt, request: Record<string, unknown>, resolved: ResolvedDefinition) {
  const winners = [...all.winners.values()];
  let test: ReturnType<typeof filterOf>;
  try {
    test = filterOf(request, resolved.definition);
  } catch {
    return undefined;
  }
  if (!test) return winners;
  const passes = test(winners.map((w) => w.record));
  return winners.filter((_, i) => passes[i]);
}

function searchChecks(
  answer: Record<string, unknown>,
  request: Record<string, unknown>,
  shown: readonly Shown[],
  vectors: VectorsAt,
  resolved: ResolvedDefinition,
  passing: ReturnType<typeof passingWinners>,
  why: string | undefined,
): Check[] {
  const checks: Check[] = [];
  const results: ShownResult[] = shown.map(({ subject, claimed }) => {
    const c = claimed as Claimed & { distance?: unknown; score?: unknown };
    return {
      subject,
      key: String(c.key).toLowerCase(),
      id: String(c.id),
      distance: typeof c.distance === 'number' ? c.distance : undefined,
      score: typeof c.score === 'number' ? c.score : Number.NaN,
    };
  });
  const mode = answer.mode ?? (request.vector ? 'vector' : 'semantic');
  const query = request.vector;
  const { metric, dim } = resolved.definition;
  const vectorMode = mode === 'vector' || mode === 'semantic';
  const usable = Array.isArray(query) && query.length === dim && query.every((x) => typeof x === 'number');
  checks.push(orderCheck(results, vectorMode));
  if (!vectorMode) {
    checks.push({
      check: 'completeness',
      verdict: 'unverifiable',
      reason: `a ${String(mode)} search ranks by the node's keyword index (BM25 statistics), which the chain does not hold`,
    });
    return checks;
  }
  if (!usable) {
    checks.push({
      check: 'distance',
      verdict: 'unverifiable',
      reason: `the request has no query vector of dimension ${dim} (a text query is embedded by the node)`,
    });
    return checks;
  }
  results.forEach((r) => {
    const w = vectors.winners.get(r.id);
    if (w && w.entity.key === r.key) checks.push(distanceCheck(r, w, metric, query as number[]));
  });
  if (!passing) {
    checks.push({ check: 'completeness', verdict: 'unverifiable', reason: why ?? 'the filter does not compile' });
    return checks;
  }
  const k = typeof request.k === 'number' ? request.k : SEARCH_K_DEFAULT;
  checks.push(
    completenessCheck({ results, searchMode: answer.search_mode, k, passing, metric, query: query as number[] }),
  );
  return checks;
}
