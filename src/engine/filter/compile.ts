// Compiles `where` (Arkiv query language, where dialect, parsed by src/query/) and the JSON `filter` of
// docs/filters.md into the engine's Cond tree, typing every literal by the declared attribute. Called by
// CollectionStore for search, count, keywordSearch and hybridSearch. Every problem is an
// InvalidFilterError: `position` for `where`, `path` for `filter`.

import {
  type AttributeType,
  type CollectionDefinition,
  I32_MAX,
  I32_MIN,
  UINT_ATTRIBUTE_MAX,
} from '../../collections/index.ts';
import {
  FILTER_DEPTH_MAX,
  FILTER_IN_VALUES_MAX,
  FILTER_TERMS_MAX,
  type Literal,
  parseQuery,
  pathMatch,
  QuerySyntaxError,
  type QueryExpr,
} from '../../query/index.ts';
import { InvalidFilterError } from '../errors.ts';
import type { CompareOp, Cond, Field, Key, Leaf } from './types.ts';

const INVERTED: Record<CompareOp, CompareOp> = { '=': '!=', '!=': '=', '<': '>=', '>=': '<', '<=': '>', '>': '<=' };

/** Meta attributes usable in filters; stored lowercase in the indexes. */
export const META_FIELDS: Readonly<Record<string, Field>> = {
  $key: { name: '$key', type: 'str', meta: true },
  $owner: { name: '$owner', type: 'str', meta: true },
  $creator: { name: '$creator', type: 'str', meta: true },
};

const F32_MAX = 3.4028234663852886e38;

type Where = { position?: number; path?: string };

function fail(message: string, at: Where): never {
  throw new InvalidFilterError(message, at);
}

function fieldOf(attributes: Record<string, AttributeType>, name: string, at: Where): Field {
  if (name.startsWith('$')) {
    const meta = Object.hasOwn(META_FIELDS, name) ? META_FIELDS[name] : undefined;
    if (meta === undefined) fail(`attribute ${name} is not supported in filters (use $key, $owner or $creator)`, at);
    return meta;
  }
  const type = Object.hasOwn(attributes, name) ? attributes[name] : undefined;
  if (type === undefined) fail(`unknown attribute ${name}`, at);
  return { name, type, meta: false };
}

function describeLiteral(lit: Literal): string {
  switch (lit.kind) {
    case 'string':
      return lit.hex ? lit.value : JSON.stringify(lit.value);
    case 'typed':
    case 'number':
    case 'decimal':
      return lit.text;
  }
}

/** A numeric value checked against a declared numeric type; `undefined` when it does not fit. */
function numericKey(type: AttributeType, v: number): number | undefined {
  switch (type) {
    case 'i32':
      return Number.isInteger(v) && v >= I32_MIN && v <= I32_MAX ? v + 0 : undefined;
    case 'uint':
      return Number.isInteger(v) && v >= 0 && v <= UINT_ATTRIBUTE_MAX ? v + 0 : undefined;
    case 'f32': {
      // Records hold binary32 values; round the literal the way encodeAttribute would store it.
      if (!Number.isFinite(v) || Math.abs(Math.fround(v)) > F32_MAX) return undefined;
      return Math.fround(v) + 0;
    }
    case 'bool':
      return v === 0 || v === 1 ? v : undefined;
    default:
      return undefined;
  }
}

function literalKey(field: Field, lit: Literal, at: Where): Key {
  const bad = (): never =>
    fail(`literal ${describeLiteral(lit)} does not fit attribute ${field.name} (${field.type})`, at);
  if (lit.kind === 'typed' && lit.type !== field.type) bad();
  if (field.type === 'str') {
    if (lit.kind === 'string' || (lit.kind === 'typed' && typeof lit.value === 'string')) {
      const s = lit.value as string;
      return field.meta ? s.toLowerCase() : s;
    }
    return bad();
  }
  switch (lit.kind) {
    case 'string':
      return bad();
    case 'typed':
      if (typeof lit.value === 'boolean') return lit.value ? 1 : 0;
      // uint(…) keeps exact digits in `text`; a value past 2^53 − 1 cannot be a stored uint.
      if (
        lit.type === 'uint' &&
        BigInt(lit.text.slice(lit.text.indexOf('(') + 1, lit.text.lastIndexOf(')')).trim()) > BigInt(UINT_ATTRIBUTE_MAX)
      )
        return bad();
      return numericKey(field.type, lit.value as number) ?? bad();
    case 'number':
      if (lit.value > BigInt(Number.MAX_SAFE_INTEGER)) return bad();
      return numericKey(field.type, Number(lit.value)) ?? bad();
    case 'decimal':
      return numericKey(field.type, lit.value) ?? bad();
  }
}

function checkGlob(field: Field, pattern: string, at: Where): void {
  if (field.type !== 'str' || field.meta)
    fail(`glob needs a str attribute, ${field.name} is ${field.meta ? 'a meta attribute' : field.type}`, at);
  if (pathMatch(pattern, '').badPattern) fail(`glob pattern ${JSON.stringify(pattern)} is malformed`, at);
}

/** Flattens nested and/or of the same kind. */
function group(t: 'and' | 'or', items: Cond[]): Cond {
  const flat: Cond[] = [];
  for (const item of items) {
    if (item.t === t) flat.push(...item.items);
    else flat.push(item);
  }
  return flat.length === 1 ? flat[0]! : { t, items: flat };
}

// ---- where ----

function compileExpr(expr: QueryExpr, attributes: Record<string, AttributeType>, negate: boolean): Cond {
  switch (expr.type) {
    case 'all':
      // The where grammar allows $all only as the whole query, so it is never negated.
      return { t: 'all' };
    case 'and':
    case 'or': {
      const items = expr.items.map((item) => compileExpr(item, attributes, negate));
      // De Morgan: under negation an AND becomes an OR of negated items and vice versa.
      return group((expr.type === 'and') !== negate ? 'and' : 'or', items);
    }
    case 'not':
      return compileExpr(expr.expr, attributes, !negate);
    case 'compare': {
      const at = { position: expr.position };
      const field = fieldOf(attributes, expr.attribute, at);
      return { t: 'cmp', field, op: negate ? INVERTED[expr.op] : expr.op, key: literalKey(field, expr.value, at) };
    }
    case 'in': {
      const at = { position: expr.position };
      const field = fieldOf(attributes, expr.attribute, at);
      return {
        t: 'in',
        field,
        negated: expr.negated !== negate,
        keys: expr.values.map((v) => literalKey(field, v, at)),
      };
    }
    case 'glob': {
      const at = { position: expr.position };
      const field = fieldOf(attributes, expr.attribute, at);
      checkGlob(field, expr.pattern, at);
      return { t: 'glob', field, negated: expr.negated !== negate, pattern: expr.pattern };
    }
  }
}

/**
 * Compiles a `where` string.
 * @param text Arkiv query language, where dialect
 * @param attributes the collection's declared attributes
 * @returns the Cond tree
 * @throws InvalidFilterError with `position`
 * @example compileWhere("topic = 'pets' && stars >= 4", { topic: 'str', stars: 'i32' })
 */
export function compileWhere(text: string, attributes: Record<string, AttributeType>): Cond {
  let expr: QueryExpr;
  try {
    expr = parseQuery(text, { dialect: 'where' });
  } catch (err) {
    if (err instanceof QuerySyntaxError) fail(err.message, { position: err.position });
    throw err;
  }
  return compileExpr(expr, attributes, false);
}

// ---- JSON filter ----

const COMPARE_KEYS: Readonly<Record<string, CompareOp>> = { eq: '=', ne: '!=', gt: '>', gte: '>=', lt: '<', lte: '<=' };
const OPERATORS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'glob', 'and', 'or', 'not'];

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function describeJson(v: unknown): string {
  if (typeof v === 'string') return v.length > 40 ? `a string of ${v.length} characters` : JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return 'an array';
  return v === null ? 'null' : typeof v;
}

function jsonKey(field: Field, value: unknown, path: string): Key {
  const at = { path };
  switch (field.type) {
    case 'str':
      if (typeof value !== 'string') fail(`value for ${field.name} must be a string, not ${describeJson(value)}`, at);
      return field.meta ? value.toLowerCase() : value;
    case 'bool':
      if (typeof value !== 'boolean')
        fail(`value for ${field.name} must be true or false, not ${describeJson(value)}`, at);
      return value ? 1 : 0;
    default: {
      const key = typeof value === 'number' ? numericKey(field.type, value) : undefined;
      if (key === undefined) {
        const want =
          field.type === 'i32'
            ? `an integer from ${I32_MIN} to ${I32_MAX}`
            : field.type === 'uint'
              ? `an integer from 0 to ${UINT_ATTRIBUTE_MAX}`
              : 'a finite binary32 number';
        fail(`value for ${field.name} (${field.type}) must be ${want}, not ${describeJson(value)}`, at);
      }
      return key;
    }
  }
}

function attributeEntries(body: unknown, op: string, path: string): [string, unknown][] {
  if (!isPlainObject(body)) fail(`${op} takes an object of attribute to value, not ${describeJson(body)}`, { path });
  const entries = Object.entries(body);
  if (entries.length === 0) fail(`${op} names no attribute`, { path });
  return entries;
}

/** Conditions (FILTER_TERMS_MAX) and `in` values (FILTER_IN_VALUES_MAX) compiled so far in one JSON filter. */
type Budget = { terms: number; inValues: number };

function spend(budget: Budget, n: number, path: string): void {
  budget.terms += n;
  if (budget.terms > FILTER_TERMS_MAX) fail(`filter has more than ${FILTER_TERMS_MAX} conditions`, { path });
}

function compileJson(
  node: unknown,
  attributes: Record<string, AttributeType>,
  negate: boolean,
  path: string,
  depth: number,
  budget: Budget,
): Cond {
  // Checked before descending, so hostile nesting never reaches the stack's limit.
  if (depth > FILTER_DEPTH_MAX) fail(`filter nested deeper than ${FILTER_DEPTH_MAX}`, { path });
  if (!isPlainObject(node)) fail(`filter must be an object, not ${describeJson(node)}`, { path });
  const ops = Object.keys(node);
  if (ops.length !== 1) {
    fail(
      ops.length === 0
        ? 'filter object names no operator'
        : `filter object must have one operator, not ${ops.length} (${ops.join(', ')})`,
      { path },
    );
  }
  const op = ops[0]!;
  const body = node[op];
  const here = path === '' ? op : `${path}.${op}`;
  if (!OPERATORS.includes(op))
    fail(`unknown filter operator ${JSON.stringify(op)} (expected one of ${OPERATORS.join(', ')})`, { path: here });

  const cmp = Object.hasOwn(COMPARE_KEYS, op) ? COMPARE_KEYS[op] : undefined;
  if (cmp !== undefined) {
    const entries = attributeEntries(body, op, here);
    spend(budget, entries.length, here);
    const leaves: Cond[] = entries.map(([name, value]) => {
      const at = `${here}.${name}`;
      const field = fieldOf(attributes, name, { path: at });
      if (field.meta && cmp !== '=' && cmp !== '!=') fail(`${name} supports only eq and ne`, { path: at });
      return { t: 'cmp', field, op: negate ? INVERTED[cmp] : cmp, key: jsonKey(field, value, at) } satisfies Leaf;
    });
    // Several attributes in one operator are all required; negated, any may fail.
    return group(negate ? 'or' : 'and', leaves);
  }
  switch (op) {
    case 'in': {
      const entries = attributeEntries(body, op, here);
      spend(budget, entries.length, here);
      const leaves: Cond[] = entries.map(([name, values]) => {
        const at = `${here}.${name}`;
        const field = fieldOf(attributes, name, { path: at });
        if (!Array.isArray(values) || values.length === 0)
          fail(`in needs a non-empty array of values for ${name}`, { path: at });
        budget.inValues += values.length;
        if (budget.inValues > FILTER_IN_VALUES_MAX)
          fail(`filter has more than ${FILTER_IN_VALUES_MAX} values in its in arrays`, { path: at });
        return {
          t: 'in',
          field,
          negated: negate,
          keys: values.map((v, i) => jsonKey(field, v, `${at}[${i}]`)),
        } satisfies Leaf;
      });
      return group(negate ? 'or' : 'and', leaves);
    }
    case 'glob': {
      const entries = attributeEntries(body, op, here);
      spend(budget, entries.length, here);
      const leaves: Cond[] = entries.map(([name, pattern]) => {
        const at = `${here}.${name}`;
        const field = fieldOf(attributes, name, { path: at });
        if (typeof pattern !== 'string')
          fail(`glob pattern for ${name} must be a string, not ${describeJson(pattern)}`, { path: at });
        checkGlob(field, pattern, { path: at });
        return { t: 'glob', field, negated: negate, pattern } satisfies Leaf;
      });
      return group(negate ? 'or' : 'and', leaves);
    }
    case 'and':
    case 'or': {
      if (!Array.isArray(body) || body.length === 0) fail(`${op} needs a non-empty array of filters`, { path: here });
      if (body.length > FILTER_TERMS_MAX) fail(`filter has more than ${FILTER_TERMS_MAX} conditions`, { path: here });
      const items = body.map((item, i) => compileJson(item, attributes, negate, `${here}[${i}]`, depth + 1, budget));
      return group((op === 'and') !== negate ? 'and' : 'or', items);
    }
    default:
      // 'not'
      return compileJson(body, attributes, !negate, here, depth + 1, budget);
  }
}

/**
 * Compiles a JSON `filter` (docs/filters.md).
 * @param filter `{"eq": {"topic": "pets"}}`, `{"and": [...]}`, …
 * @param attributes the collection's declared attributes
 * @returns the Cond tree
 * @throws InvalidFilterError with `path`
 * @example compileJsonFilter({ not: { in: { stars: [1, 2] } } }, { stars: 'i32' })
 */
export function compileJsonFilter(filter: unknown, attributes: Record<string, AttributeType>): Cond {
  return compileJson(filter, attributes, false, '', 0, { terms: 0, inValues: 0 });
}

/**
 * Compiles the filter of a request: `where`, `filter`, both (ANDed) or neither.
 * @param params `{ where?, filter? }` (`filter: undefined` or `null` means none)
 * @param definition the collection's definition
 * @returns the Cond tree, or undefined when there is no filter
 * @throws InvalidFilterError
 * @example compileFilter({ where: 'stars > 3' }, definition)
 */
export function compileFilter(
  params: { where?: string | undefined; filter?: unknown },
  definition: CollectionDefinition,
): Cond | undefined {
  const parts: Cond[] = [];
  if (params.where !== undefined) {
    if (typeof params.where !== 'string') fail('where must be a string', { position: 0 });
    const c = compileWhere(params.where, definition.attributes);
    if (c.t !== 'all') parts.push(c);
  }
  if (params.filter !== undefined && params.filter !== null)
    parts.push(compileJsonFilter(params.filter, definition.attributes));
  if (parts.length === 0) return undefined;
  return group('and', parts);
}
