// The DB-chain's typed query language (arkiv-gen-d.md §4.2, the Tiramisu dialect) for the devnet's
// arkiv_query and arkiv_getEntityCount: typed literals (`str('it''s')`, `u64(5)`, …), `NOT (a = v)`
// instead of `!=`, no IN or globs, `$expiresAt`/`$createdAt`; errors carry the node's codes (§4.4).
import { getAddress } from 'viem';
import { RpcError } from '../transactions.ts';
import type { DbEntity } from './state.ts';
import { STR_VALUE_MAX_BYTES, U64_MAX, type Cell, type CellType } from '../../chain/dbchain/index.ts';

export const QUERY_MAX_BYTES = 8 * 1024;
export const QUERY_MAX_PREDICATES = 64;
export const QUERY_MAX_DEPTH = 32;

type ValueType = Exclude<CellType, 'tombstone' | 'bytes'>;
/** A typed value: numbers as bigint (dec scaled by 10^18), byte types as lowercase 0x hex, str as text. */
interface Typed {
  type: ValueType;
  value: bigint | string | boolean;
}
type CompareOp = '=' | '<' | '<=' | '>' | '>=';

type Expr =
  | { t: 'all' }
  | { t: 'or' | 'and'; items: Expr[] }
  | { t: 'not'; expr: Expr }
  | { t: 'compare'; attribute: string; op: CompareOp; value: Typed }
  | { t: 'prefix'; attribute: string; value: string };

const SYSTEM_TYPES: Record<string, ValueType> = {
  $key: 'key',
  $owner: 'addr',
  $creator: 'addr',
  $expiresAt: 'u64',
  $createdAt: 'u64',
  $contentType: 'str',
};
const NOT_QUERYABLE = new Set([
  '$updatedAt',
  '$creationFlags',
  '$payload',
  '$expiration',
  '$createdAtBlock',
  '$sequence',
  '$all',
]);
const TYPE_TAGS = new Set(['bool', 'i32', 'u64', 'u256', 'dec', 'bytes32', 'str', 'addr', 'key', 'bytes']);
const RESERVED = new Set(['and', 'or', 'not', 'true', 'false', 'startswith', 'exists', 'typeof', ...TYPE_TAGS]);
const RANGE_TYPES = new Set<ValueType>(['i32', 'u64', 'u256', 'dec']);

function fail(code: number, message: string, position?: number): never {
  throw new RpcError(code, message, position === undefined ? { message } : { position, message });
}

type TokenType =
  | 'lparen'
  | 'rparen'
  | 'comma'
  | 'op'
  | 'star'
  | 'system'
  | 'word'
  | 'number'
  | 'hex'
  | 'decimal'
  | 'string'
  | 'removed'
  | 'eof';
interface Token {
  type: TokenType;
  text: string;
  value: string;
  start: number;
}

const RULES: [TokenType | 'skip', RegExp][] = [
  ['skip', /(?:[ \t\r\n]+|--[^\n]*)/y],
  ['lparen', /\(/y],
  ['rparen', /\)/y],
  // Only in the v1 dialect's IN lists; lexed so that IN gets its own error (-32002) rather than a syntax one.
  ['comma', /,/y],
  ['removed', /(?:&&|\|\||!=|!~|!|~)/y],
  ['op', /(?:<=|>=|=|<|>)/y],
  ['star', /\*/y],
  ['system', /\$[A-Za-z][A-Za-z0-9_]*/y],
  ['hex', /0x[0-9a-fA-F]*/y],
  ['decimal', /[+-]?[0-9]+\.[0-9]+/y],
  ['number', /[+-]?[0-9]+/y],
  ['string', /'(?:[^']|'')*'/y],
  ['word', /[A-Za-z_][A-Za-z0-9_.]*(?:-[A-Za-z0-9_.]+)*/y],
];

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let pos = 0;
  outer: while (pos < text.length) {
    for (const [type, re] of RULES) {
      re.lastIndex = pos;
      const m = re.exec(text);
      if (!m || m[0].length === 0) continue;
      if (type !== 'skip') {
        const value = type === 'string' ? m[0].slice(1, -1).replaceAll("''", "'") : m[0];
        tokens.push({ type, text: m[0], value, start: pos });
      }
      pos += m[0].length;
      continue outer;
    }
    fail(-32001, `unexpected character ${JSON.stringify(text[pos])}`, pos);
  }
  tokens.push({ type: 'eof', text: '', value: '', start: text.length });
  return tokens;
}

const REMOVED_HINT: Record<string, string> = {
  '!=': "'!=' is not supported; use NOT (a = v)",
  '&&': "'&&' is not supported; use AND",
  '||': "'||' is not supported; use OR",
  '!': "'!' is not supported; use NOT",
};

class Parser {
  #i = 0;
  #predicates = 0;
  constructor(readonly tokens: Token[]) {}

  get #peek(): Token {
    return this.tokens[this.#i] ?? (this.tokens.at(-1) as Token);
  }
  #next(): Token {
    const token = this.#peek;
    if (token.type === 'removed')
      fail(-32002, REMOVED_HINT[token.text] ?? `'${token.text}' is not supported`, token.start);
    this.#i++;
    return token;
  }
  #keyword(word: string): boolean {
    const token = this.#peek;
    if (token.type !== 'word' || token.value.toLowerCase() !== word) return false;
    this.#i++;
    return true;
  }
  #expect(type: TokenType, what: string): Token {
    const token = this.#next();
    if (token.type !== type) fail(-32001, `expected ${what}, found ${token.text || 'end of query'}`, token.start);
    return token;
  }

  top(): Expr {
    if (this.#peek.type === 'star') {
      this.#next();
      this.#expect('eof', 'end of query after *');
      return { t: 'all' };
    }
    const expr = this.#or(0);
    this.#expect('eof', 'end of query');
    return expr;
  }

  #or(depth: number): Expr {
    if (depth > QUERY_MAX_DEPTH) fail(-32004, `query nests deeper than ${QUERY_MAX_DEPTH}`, this.#peek.start);
    const items = [this.#and(depth)];
    while (this.#keyword('or')) items.push(this.#and(depth));
    return items.length === 1 ? (items[0] as Expr) : { t: 'or', items };
  }
  #and(depth: number): Expr {
    const items = [this.#unary(depth)];
    while (this.#keyword('and')) items.push(this.#unary(depth));
    return items.length === 1 ? (items[0] as Expr) : { t: 'and', items };
  }
  #unary(depth: number): Expr {
    if (this.#keyword('not')) return { t: 'not', expr: this.#unary(depth + 1) };
    if (this.#peek.type === 'lparen') {
      this.#next();
      const expr = this.#or(depth + 1);
      this.#expect('rparen', "')'");
      return expr;
    }
    return this.#predicate();
  }

  #predicate(): Expr {
    const token = this.#next();
    if (++this.#predicates > QUERY_MAX_PREDICATES)
      fail(-32004, `query has more than ${QUERY_MAX_PREDICATES} predicates`, token.start);
    let attribute: string;
    if (token.type === 'system') {
      if (NOT_QUERYABLE.has(token.value) || !(token.value in SYSTEM_TYPES))
        fail(-32002, `${token.value} is not a queryable attribute`, token.start);
      attribute = token.value;
    } else if (token.type === 'word') {
      const lower = token.value.toLowerCase();
      if (lower === 'exists' || lower === 'typeof') fail(-32002, `${token.value} is not supported`, token.start);
      if (RESERVED.has(lower)) fail(-32001, `${token.value} is a reserved word, not an attribute`, token.start);
      attribute = token.value;
    } else if (token.type === 'star') {
      return fail(-32001, "'*' cannot be combined with other predicates", token.start);
    } else {
      return fail(-32001, `expected an attribute, found ${token.text || 'end of query'}`, token.start);
    }
    const systemType = SYSTEM_TYPES[attribute];
    if (this.#keyword('startswith')) {
      const value = this.#literal(systemType);
      if (value.type !== 'str') fail(-32002, 'STARTSWITH takes a str literal', token.start);
      if (systemType && systemType !== 'str') fail(-32002, `${attribute} is not a str`, token.start);
      return { t: 'prefix', attribute, value: value.value as string };
    }
    const opToken = this.#peek;
    if (opToken.type === 'word' && opToken.value.toLowerCase() === 'in')
      fail(-32002, 'IN is not supported; use OR', opToken.start);
    const op = this.#expect('op', 'a comparison operator').text as CompareOp;
    const value = this.#literal(systemType);
    if (op !== '=' && !RANGE_TYPES.has(value.type))
      fail(-32002, `range operator ${op} needs an i32, u64, u256 or dec literal`, opToken.start);
    if (systemType && systemType !== value.type)
      fail(-32002, `${attribute} is a ${systemType}, not a ${value.type}`, opToken.start);
    return { t: 'compare', attribute, op, value };
  }

  /** A typed literal; a quoted bare string is read as the system attribute's own type. */
  #literal(systemType: ValueType | undefined): Typed {
    const token = this.#next();
    if (token.type === 'number') return { type: 'i32', value: i32(token.value, token.start) };
    if (token.type === 'string') {
      if (systemType === 'addr' || systemType === 'key' || systemType === 'str')
        return typedValue(systemType, token.value, token.start);
      return fail(-32002, "an untyped string literal; write str('…')", token.start);
    }
    if (token.type === 'word') {
      const lower = token.value.toLowerCase();
      if (lower === 'true' || lower === 'false') return { type: 'bool', value: lower === 'true' };
      if (TYPE_TAGS.has(lower) && lower !== 'bytes' && this.#peek.type === 'lparen') {
        this.#next();
        const inner = this.#next();
        if (inner.type === 'rparen' || inner.type === 'eof') fail(-32001, `${lower}() needs a value`, inner.start);
        this.#expect('rparen', "')'");
        return typedValue(
          lower as ValueType,
          inner.type === 'string' ? inner.value : inner.text,
          inner.start,
          inner.type,
        );
      }
    }
    return fail(-32001, `expected a literal, found ${token.text || 'end of query'}`, token.start);
  }
}

function i32(text: string, position: number): bigint {
  const n = BigInt(text);
  if (n < -(2n ** 31n) || n >= 2n ** 31n) fail(-32003, `${text} is out of the i32 range`, position);
  return n;
}

function typedValue(type: ValueType, text: string, position: number, tokenType: TokenType = 'string'): Typed {
  const wrongForm = () => fail(-32003, `${JSON.stringify(text)} is not a ${type} literal`, position);
  const hexOf = (bytes: number) => {
    if (!new RegExp(`^0x[0-9a-fA-F]{${bytes * 2}}$`).test(text)) wrongForm();
    return text.toLowerCase();
  };
  switch (type) {
    case 'i32':
      return tokenType === 'number' ? { type, value: i32(text, position) } : wrongForm();
    case 'u64':
    case 'u256': {
      if (tokenType !== 'number' && tokenType !== 'hex') wrongForm();
      if (text.startsWith('-') || text.startsWith('+')) wrongForm();
      const n = BigInt(text);
      if (n > (type === 'u64' ? U64_MAX : (1n << 256n) - 1n))
        fail(-32003, `${text} is out of the ${type} range`, position);
      return { type, value: n };
    }
    case 'dec': {
      const m = /^([+-]?)([0-9]+)(?:\.([0-9]+))?$/.exec(text);
      if (!m || (tokenType !== 'number' && tokenType !== 'decimal')) return wrongForm();
      const fraction = m[3] ?? '';
      if (fraction.length > 18) fail(-32003, `${text} has more than 18 decimal places`, position);
      const scaled = BigInt(`${m[2]}${fraction.padEnd(18, '0')}`);
      return { type, value: m[1] === '-' ? -scaled : scaled };
    }
    case 'str':
      if (tokenType !== 'string') wrongForm();
      if (new TextEncoder().encode(text).length > STR_VALUE_MAX_BYTES)
        fail(-32003, `a str literal is at most ${STR_VALUE_MAX_BYTES} bytes`, position);
      return { type, value: text };
    case 'addr': {
      const value = hexOf(20);
      if (/[A-F]/.test(text) && /[a-f]/.test(text) && getAddress(text) !== text)
        fail(-32003, `${text} is not a valid EIP-55 checksum address`, position);
      return { type, value };
    }
    case 'key':
    case 'bytes32':
      return { type, value: hexOf(32) };
    case 'bool':
      return wrongForm();
  }
}

/** An entity's attribute cell as a comparable typed value. */
function cellValue(cell: Cell): Typed | undefined {
  switch (cell.type) {
    case 'i32':
      return { type: 'i32', value: BigInt(cell.value) };
    case 'addr':
    case 'bytes32':
    case 'key':
      return { type: cell.type, value: cell.value.toLowerCase() };
    case 'tombstone':
    case 'bytes':
      return undefined;
    default:
      return cell;
  }
}

function attributeOf(entity: DbEntity, name: string): Typed | undefined {
  switch (name) {
    case '$key':
      return { type: 'key', value: entity.key };
    case '$owner':
      return { type: 'addr', value: entity.owner };
    case '$creator':
      return { type: 'addr', value: entity.creator };
    case '$expiresAt':
      return { type: 'u64', value: entity.expiresAt };
    case '$createdAt':
      return { type: 'u64', value: BigInt(entity.createdAt) };
    case '$contentType':
      return { type: 'str', value: entity.contentType };
  }
  const attribute = entity.attributes.find((a) => a.name === name);
  return attribute && cellValue(attribute);
}

const utf8 = new TextEncoder();
function startsWithBytes(value: string, prefix: string): boolean {
  const a = utf8.encode(value);
  const b = utf8.encode(prefix);
  return b.length <= a.length && b.every((byte, i) => a[i] === byte);
}

function evaluate(expr: Expr, entity: DbEntity): boolean {
  switch (expr.t) {
    case 'all':
      return true;
    case 'or':
      return expr.items.some((item) => evaluate(item, entity));
    case 'and':
      return expr.items.every((item) => evaluate(item, entity));
    case 'not':
      return !evaluate(expr.expr, entity);
    case 'prefix': {
      const value = attributeOf(entity, expr.attribute);
      return value?.type === 'str' && startsWithBytes(value.value as string, expr.value);
    }
    case 'compare': {
      const value = attributeOf(entity, expr.attribute);
      // A predicate asserts the attribute exists with exactly the literal's type.
      if (!value || value.type !== expr.value.type) return false;
      const [a, b] = [value.value, expr.value.value];
      switch (expr.op) {
        case '=':
          return a === b;
        case '<':
          return a < b;
        case '<=':
          return a <= b;
        case '>':
          return a > b;
        case '>=':
          return a >= b;
      }
    }
  }
}

/** Parses a query text into a predicate over live entities; throws RpcError with the node's codes. */
export function compileDbQuery(text: unknown): (entity: DbEntity) => boolean {
  if (typeof text !== 'string') fail(-32602, 'invalid params: the query must be a string');
  if (utf8.encode(text).length > QUERY_MAX_BYTES) fail(-32004, `query is longer than ${QUERY_MAX_BYTES} bytes`);
  const expr = new Parser(tokenize(text)).top();
  return (entity) => evaluate(expr, entity);
}
