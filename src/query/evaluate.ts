// Arkiv-node semantics for a parsed query (pebble-bitmap-store's normalize.go + evaluate.go), used
// by the devnet's arkiv_query to pick entities exactly as the real node would.

import type { CompareOp, Literal, QueryExpr } from './ast.ts';
import { globMatch } from './glob.ts';

export interface QueryableEntity {
  /** Lowercase 0x hex, as the node stores them. */
  key: string;
  owner: string;
  creator: string;
  expiresAt: bigint;
  sequence: bigint;
  stringAttributes: ReadonlyMap<string, string>;
  numericAttributes: ReadonlyMap<string, bigint>;
}

export type EntityPredicate = (entity: QueryableEntity) => boolean;

// The node evaluates every comparison as "union of the bitmaps of the attribute values that satisfy
// it", so an entity without the attribute (of the literal's type) never matches, even for `!=`,
// NOT IN and `!~`. Negation therefore cannot be boolean NOT: like normalize.go we push `!(…)` down to
// the leaves with De Morgan and flip each leaf operator.
const INVERTED: Record<CompareOp, CompareOp> = {
  '=': '!=',
  '!=': '=',
  '<': '>=',
  '>=': '<',
  '<=': '>',
  '>': '<=',
};

export function compileArkivQuery(expr: QueryExpr): EntityPredicate {
  return compile(expr, false);
}

function compile(expr: QueryExpr, negate: boolean): EntityPredicate {
  switch (expr.type) {
    case 'all':
      if (negate) throw new Error('$all cannot be negated');
      return () => true;
    case 'and':
    case 'or': {
      const parts = expr.items.map((item) => compile(item, negate));
      // De Morgan: under negation an AND becomes an OR of negated items and vice versa.
      const conjunction = (expr.type === 'and') !== negate;
      return conjunction ? (e) => parts.every((p) => p(e)) : (e) => parts.some((p) => p(e));
    }
    case 'not':
      return compile(expr.expr, !negate);
    case 'compare':
      return compileCompare(expr.attribute, negate ? INVERTED[expr.op] : expr.op, expr.value);
    case 'in':
      return compileIn(expr.attribute, expr.negated !== negate, expr.values);
    case 'glob': {
      const { attribute, pattern } = expr;
      const negated = expr.negated !== negate;
      return (e) => {
        const v = stringValue(e, attribute);
        return v !== undefined && globMatch(pattern, v) !== negated;
      };
    }
  }
}

function compileCompare(attribute: string, op: CompareOp, literal: Literal): EntityPredicate {
  if (literal.kind === 'string') {
    const target = normalizeMetaString(attribute, literal.value);
    return (e) => {
      const v = stringValue(e, attribute);
      return v !== undefined && holds(op, compareBytewise(v, target));
    };
  }
  const target = numericLiteral(literal);
  return (e) => {
    const v = numericValue(e, attribute);
    return v !== undefined && holds(op, v < target ? -1 : v > target ? 1 : 0);
  };
}

function compileIn(attribute: string, negated: boolean, values: Literal[]): EntityPredicate {
  // The parser guarantees a homogeneous list; the first item's kind picks the index.
  if (values[0]?.kind === 'string') {
    const set = new Set(values.map((v) => normalizeMetaString(attribute, (v as { value: string }).value)));
    return (e) => {
      const v = stringValue(e, attribute);
      return v !== undefined && set.has(v) !== negated;
    };
  }
  const set = new Set(values.map(numericLiteral));
  return (e) => {
    const v = numericValue(e, attribute);
    return v !== undefined && set.has(v) !== negated;
  };
}

function numericLiteral(literal: Literal): bigint {
  if (literal.kind === 'number') return literal.value;
  throw new Error(`a ${literal.kind} literal belongs to the where dialect and has no Arkiv node semantics`);
}

function holds(op: CompareOp, cmp: number): boolean {
  switch (op) {
    case '=':
      return cmp === 0;
    case '!=':
      return cmp !== 0;
    case '<':
      return cmp < 0;
    case '<=':
      return cmp <= 0;
    case '>':
      return cmp > 0;
    case '>=':
      return cmp >= 0;
  }
}

// The node keeps meta values in the same indexes as user attributes: $key/$owner/$creator as
// strings, $expiration/$sequence as numbers. A literal of the other type finds nothing.
function stringValue(e: QueryableEntity, attribute: string): string | undefined {
  switch (attribute) {
    case '$key':
      return e.key;
    case '$owner':
      return e.owner;
    case '$creator':
      return e.creator;
    case '$expiration':
    case '$sequence':
      return undefined;
    default:
      return e.stringAttributes.get(attribute);
  }
}

function numericValue(e: QueryableEntity, attribute: string): bigint | undefined {
  switch (attribute) {
    case '$expiration':
      return e.expiresAt;
    case '$sequence':
      return e.sequence;
    case '$key':
    case '$owner':
    case '$creator':
      return undefined;
    default:
      return e.numericAttributes.get(attribute);
  }
}

function normalizeMetaString(attribute: string, value: string): string {
  return attribute === '$key' || attribute === '$owner' || attribute === '$creator' ? goToLower(value) : value;
}

/**
 * Go's strings.ToLower maps each rune on its own (simple case mapping). JS toLowerCase applies
 * context rules (final sigma) and multi-character mappings, so go rune by rune and special-case the
 * one unconditional multi-character lowercase mapping, U+0130.
 */
export function goToLower(s: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: an ASCII-only test, control characters included
  if (/^[\x00-\x7f]*$/.test(s)) return s.toLowerCase();
  let out = '';
  for (const ch of s) out += ch === '\u0130' ? 'i' : ch.toLowerCase();
  return out;
}

/**
 * Compares as Go compares strings, i.e. by UTF-8 bytes, which is code point order. UTF-16 code unit
 * order differs only between surrogates (astral code points) and U+E000..U+FFFF, so remap those.
 */
export function compareBytewise(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x < y ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}
