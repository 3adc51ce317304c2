// A listing page against the chain: its order (last-modified block, then key; newest or oldest first), its
// total, and that the page is the chain's listing from where it starts (the first page: from the start).
import { LIST_LIMIT_DEFAULT } from '../service/limits.ts';
import type { Winner } from './collectionAt.ts';
import type { Check } from './types.ts';
import type { Shown } from './verifyAnswer.ts';

type Entry = { key: string; block: number; subject: string };

export function listChecks(
  answer: Record<string, unknown>,
  request: Record<string, unknown>,
  shown: readonly Shown[],
  passing: readonly Winner[] | undefined,
  why: string | undefined,
): Check[] {
  const sign = answer.order === 'oldest' ? 1 : -1;
  const compare = (a: Entry, b: Entry) => sign * (a.block - b.block || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const entries: Entry[] = shown.map(({ subject, claimed }) => ({
    subject,
    key: String(claimed.key).toLowerCase(),
    block: Number(claimed.last_modified_block),
  }));
  const checks: Check[] = [];
  const misplaced = entries.findIndex((e, i) => i > 0 && compare(entries[i - 1] as Entry, e) >= 0);
  const out = entries[misplaced];
  checks.push(
    out
      ? {
          check: 'order',
          verdict: 'refuted',
          evidence: `${out.subject} (block ${out.block}, key ${out.key}) is out of ${answer.order ?? 'newest'}-first order`,
        }
      : { check: 'order', verdict: 'verified' },
  );
  if (!passing) {
    checks.push({ check: 'completeness', verdict: 'unverifiable', reason: why ?? 'the filter does not compile' });
    return checks;
  }
  checks.push(
    passing.length === answer.total
      ? { check: 'total', verdict: 'verified' }
      : {
          check: 'total',
          verdict: 'refuted',
          evidence: `${passing.length} entities pass the filter at this block; the answer's total is ${String(answer.total)}`,
        },
  );
  const listing: Entry[] = passing
    .map((w) => ({ key: w.entity.key, block: w.entity.lastModifiedAtBlock ?? 0, subject: w.record.id }))
    .sort(compare);
  const first = entries[0];
  const start = request.cursor === undefined || !first ? 0 : listing.findIndex((e) => e.key === first.key);
  const limit = typeof request.limit === 'number' ? request.limit : LIST_LIMIT_DEFAULT;
  const expected = start < 0 ? [] : listing.slice(start, start + limit);
  const wrong = entries.findIndex((e, i) => expected[i]?.key !== e.key);
  const at = expected[wrong];
  checks.push(
    wrong >= 0
      ? {
          check: 'completeness',
          verdict: 'refuted',
          evidence: at
            ? `position ${start + wrong + 1} of the chain's listing is ${at.key} (${JSON.stringify(at.subject)}), not what the answer shows there`
            : `${entries[wrong]?.subject} is not in the chain's listing there`,
        }
      : entries.length < expected.length
        ? {
            check: 'completeness',
            verdict: 'refuted',
            evidence: `the page shows ${entries.length} entities where the chain's listing has ${expected.length} (limit ${limit}); next: ${expected[entries.length]?.key}`,
          }
        : { check: 'completeness', verdict: 'verified' },
  );
  return checks;
}
