// Canonical text for a query AST; parseQuery(formatQuery(ast)) gives back the same AST. Used by
// round-trip tests and by anything that rewrites filters (e.g. the devnet logging the query it ran).

import type { Literal, QueryExpr } from './ast.ts';
import { parseLiteral, UINT64_MAX } from './parser.ts';

const HEX_LITERAL = /^0x(?:[0-9a-fA-F]{40}|[0-9a-fA-F]{64})$/;
const IDENT = /^[\p{L}_][\p{L}\p{N}_]*$/u;
const META = /^\$(?:key|owner|creator|expiration|sequence)$/;

export function formatQuery(expr: QueryExpr): string {
  if (expr.type === 'all') return '$all';
  return formatExpr(expr);
}

function formatExpr(expr: QueryExpr): string {
  switch (expr.type) {
    case 'all':
      throw new Error('$all is only valid as the whole query');
    case 'or':
      checkArity(expr.items);
      // The parser does not flatten across parentheses, so nested groups of the same kind keep theirs.
      return expr.items.map((item) => (item.type === 'or' ? `(${formatExpr(item)})` : formatExpr(item))).join(' || ');
    case 'and':
      checkArity(expr.items);
      return expr.items
        .map((item) => (item.type === 'or' || item.type === 'and' ? `(${formatExpr(item)})` : formatExpr(item)))
        .join(' && ');
    case 'not':
      // `!` is only accepted before a parenthesis.
      return `!(${formatExpr(expr.expr)})`;
    case 'compare':
      return `${attributeName(expr.attribute)} ${expr.op} ${formatLiteral(expr.value)}`;
    case 'in':
      if (expr.values.length === 0) throw new Error('IN needs at least one value');
      return `${attributeName(expr.attribute)} ${expr.negated ? 'NOT IN' : 'IN'} (${expr.values.map(formatLiteral).join(' ')})`;
    case 'glob':
      return `${attributeName(expr.attribute)} ${expr.negated ? '!~' : '~'} ${goQuote(expr.pattern)}`;
  }
}

function checkArity(items: QueryExpr[]): void {
  // A one-item group would come back from the parser as the bare item.
  if (items.length < 2) throw new Error('and/or need at least two items');
}

function attributeName(name: string): string {
  if (!IDENT.test(name) && !META.test(name)) throw new Error(`not a valid attribute name: ${JSON.stringify(name)}`);
  return name;
}

export function formatLiteral(lit: Literal): string {
  switch (lit.kind) {
    case 'string':
      return lit.hex === true && HEX_LITERAL.test(lit.value) ? lit.value : goQuote(lit.value);
    case 'number':
      if (lit.value < 0n || lit.value > UINT64_MAX) throw new Error(`number ${lit.value} is outside uint64`);
      return faithfulText(lit) ?? lit.value.toString();
    case 'decimal':
      return faithfulText(lit) ?? formatDecimal(lit.value);
    case 'typed':
      return faithfulText(lit) ?? formatTyped(lit);
  }
}

// Keep the author's spelling (e.g. `010`, `1e3`, `i32( -5 )`) whenever it still means the same thing.
function faithfulText(lit: Exclude<Literal, { kind: 'string' }>): string | undefined {
  try {
    const back = parseLiteral(lit.text, 'where');
    return sameLiteral(back, lit) ? lit.text : undefined;
  } catch {
    return undefined;
  }
}

function sameLiteral(a: Literal, b: Literal): boolean {
  if (a.kind !== b.kind || !Object.is(a.value, b.value)) return false;
  if (a.kind === 'typed' && b.kind === 'typed' && a.type !== b.type) return false;
  return 'text' in a && 'text' in b && a.text === b.text;
}

function formatDecimal(value: number): string {
  if (!Number.isFinite(value)) throw new Error(`cannot format ${value}`);
  if (Object.is(value, -0)) return '-0';
  const s = String(value);
  // A bare non-negative integer would parse as a uint64 number, not a decimal.
  return /^[0-9]+$/.test(s) ? `${s}.0` : s;
}

function formatTyped(lit: Extract<Literal, { kind: 'typed' }>): string {
  const v = lit.value;
  switch (lit.type) {
    case 'str':
      return `str(${goQuote(String(v))})`;
    case 'bool':
      return `bool(${v === true ? 'true' : 'false'})`;
    case 'i32':
      return `i32(${String(v)})`;
    case 'uint':
      return `uint(${BigInt(v as number).toString()})`;
    case 'f32':
      return `f32(${formatDecimal(v as number)})`;
  }
}

/** Double-quoted literal that Go's strconv.Unquote (and our lexer) reads back to `s`. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    // `for…of` yields whole code points, so codePointAt(0) is always defined.
    const c = ch.codePointAt(0) ?? 0;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}
