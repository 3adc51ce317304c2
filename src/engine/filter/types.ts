// The engine's compiled filter (IR): `where` text and the JSON `filter` both compile to a Cond tree
// whose leaves hold typed keys and whose negations are already pushed down to the leaves (Arkiv
// semantics). Produced by compile.ts; read by predicate.ts (evaluation) and plan.ts (cardinality).

import type { AttributeType } from '../../collections/index.ts';

/** A filterable attribute: a declared one, or a meta attribute (`$key`, `$owner`, `$creator`, as str). */
export type Field = { name: string; type: AttributeType; meta: boolean };

/**
 * A value as the indexes and comparisons see it: strings for `str` and meta attributes (meta values
 * lowercased), numbers for the numeric types, 0/1 for `bool` (false < true, as stored on chain).
 */
export type Key = string | number;

export type CompareOp = '=' | '!=' | '<' | '<=' | '>' | '>=';

export type Leaf =
  | { t: 'cmp'; field: Field; op: CompareOp; key: Key }
  | { t: 'in'; field: Field; negated: boolean; keys: Key[] }
  | { t: 'glob'; field: Field; negated: boolean; pattern: string };

/**
 * `all` matches every live record. Every leaf matches only records that have the attribute, whatever
 * the operator (an `!=`, NOT IN or `!~` never matches a record lacking the attribute).
 */
export type Cond = { t: 'all' } | { t: 'and'; items: Cond[] } | { t: 'or'; items: Cond[] } | Leaf;
