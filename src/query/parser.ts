// Recursive-descent parser for the Arkiv query language. The arkiv dialect reproduces the node's
// participle grammar (query/language.go) token for token, including what participle's one-token
// lookahead rejects; the where dialect is the vector engine's superset (typed literals etc.).

import {
  QuerySyntaxError,
  type CompareOp,
  type Dialect,
  type Literal,
  type QueryExpr,
  type TypedLiteralType,
} from './ast.ts';
import { defined } from '../defined.ts';
import { tokenize, type Token, type TokenType } from './lexer.ts';
import { FILTER_DEPTH_MAX, FILTER_IN_VALUES_MAX, FILTER_TERMS_MAX } from './limits.ts';

export interface ParseOptions {
  dialect?: Dialect;
}

export const UINT64_MAX = (1n << 64n) - 1n;

const COMPARE_TOKENS: Partial<Record<TokenType, CompareOp>> = {
  eq: '=',
  neq: '!=',
  lt: '<',
  leq: '<=',
  gt: '>',
  geq: '>=',
};

const TYPED_NAMES: readonly TypedLiteralType[] = ['str', 'i32', 'uint', 'f32', 'bool'];

type ValueClass = 'string' | 'numeric' | 'bool';

export function parseQuery(text: string, options: ParseOptions = {}): QueryExpr {
  const dialect = options.dialect ?? 'arkiv';
  const parser = new Parser(text, tokenize(text, dialect), dialect);
  return parser.parseTopLevel();
}

/** Parses one literal on its own (used by formatQuery to check that a literal's `text` is faithful). */
export function parseLiteral(text: string, dialect: Dialect): Literal {
  const parser = new Parser(text, tokenize(text, dialect), dialect);
  const lit = parser.parseValue();
  parser.expectEnd();
  return lit;
}

/**
 * strconv.ParseUint(s, 0, 64) restricted to the node's Number token `[0-9]+`: participle converts
 * with base 0, so a leading zero means octal (`010` is 8 and `08` is an error).
 */
export function parseGoUint(digits: string): bigint | { error: string } {
  const prefix = `strconv.ParseUint: parsing ${JSON.stringify(digits)}`;
  let value: bigint;
  if (digits.length > 1 && digits.startsWith('0')) {
    if (!/^[0-7]+$/.test(digits)) return { error: `${prefix}: invalid syntax` };
    value = BigInt(`0o${digits.slice(1)}`);
  } else {
    value = BigInt(digits);
  }
  if (value > UINT64_MAX) return { error: `${prefix}: value out of range` };
  return value;
}

class Parser {
  #index = 0;
  #depth = 0;
  #terms = 0;
  #inValues = 0;
  readonly #text: string;
  readonly #tokens: Token[];
  readonly #dialect: Dialect;

  constructor(text: string, tokens: Token[], dialect: Dialect) {
    this.#text = text;
    this.#tokens = tokens;
    this.#dialect = dialect;
  }

  parseTopLevel(): QueryExpr {
    const first = this.#peek();
    if (first.type === 'eof') this.#fail(first);
    if (first.type === 'all' || first.type === 'star') {
      this.#next();
      this.expectEnd();
      return { type: 'all' };
    }
    const expr = this.#parseOr();
    this.expectEnd();
    return expr;
  }

  expectEnd(): void {
    const t = this.#peek();
    if (t.type !== 'eof') this.#fail(t);
  }

  #parseOr(): QueryExpr {
    const items = [this.#parseAnd()];
    while (this.#isOp(this.#peek(), 'or', 'OR', 'or')) {
      this.#next();
      items.push(this.#parseAnd());
    }
    const [only] = items;
    return only !== undefined && items.length === 1 ? only : { type: 'or', items };
  }

  #parseAnd(): QueryExpr {
    const items = [this.#parseTerm()];
    while (this.#isOp(this.#peek(), 'and', 'AND', 'and')) {
      this.#next();
      items.push(this.#parseTerm());
    }
    const [only] = items;
    return only !== undefined && items.length === 1 ? only : { type: 'and', items };
  }

  #parseTerm(): QueryExpr {
    const t0 = this.#peek();
    const t1 = this.#peek(1);
    if (++this.#terms > FILTER_TERMS_MAX) this.#error(t0, `more than ${FILTER_TERMS_MAX} conditions`);

    if (t0.type === 'lparen') {
      this.#next();
      return this.#parseParenBody();
    }
    if ((t0.type === 'not' || isKeyword(t0, 'NOT', 'not')) && t1.type === 'lparen') {
      this.#next();
      this.#next();
      return { type: 'not', expr: this.#parseParenBody() };
    }
    // `!name` (what the SDK's not() builds) fails here, at the token after `!`.
    if (t0.type === 'not') this.#fail(t1, 'expected "("');
    if (t0.type !== 'ident' && t0.type !== 'meta') this.#fail(t0);

    const attribute = t0.text;
    const position = t0.start;
    const compareOp = COMPARE_TOKENS[t1.type];

    if (compareOp === '=' || compareOp === '!=') {
      this.#skip(2);
      return { type: 'compare', op: compareOp, attribute, value: this.parseValue(), position };
    }
    if (isKeyword(t1, 'IN', 'in')) {
      this.#skip(2);
      return { type: 'in', negated: false, attribute, values: this.#parseValues(), position };
    }
    if (isKeyword(t1, 'NOT', 'not')) {
      const t2 = this.#peek(2);
      if (isKeyword(t2, 'IN', 'in')) {
        this.#skip(3);
        return { type: 'in', negated: true, attribute, values: this.#parseValues(), position };
      }
      // The node's grammar lists `NOT GLOB`, but participle (lookahead 1) has already committed to
      // the `NOT IN` production after two tokens and never tries Glob, so the node rejects it.
      if (this.#dialect === 'where' && t0.type === 'ident' && isKeyword(t2, 'GLOB', 'glob')) {
        this.#skip(3);
        return { type: 'glob', negated: true, attribute, pattern: this.#parsePattern(), position };
      }
      this.#fail(t2, 'expected IN');
    }
    // Range and glob operators take only plain identifiers, never meta attributes.
    if (t0.type === 'ident') {
      if (compareOp !== undefined) {
        this.#skip(2);
        return { type: 'compare', op: compareOp, attribute, value: this.parseValue(), position };
      }
      if (t1.type === 'glob' || t1.type === 'notglob' || isKeyword(t1, 'GLOB', 'glob')) {
        this.#skip(2);
        return { type: 'glob', negated: t1.type === 'notglob', attribute, pattern: this.#parsePattern(), position };
      }
    }
    this.#fail(t1);
  }

  #parseParenBody(): QueryExpr {
    // Checked before descending, so hostile nesting never reaches the stack's limit.
    if (++this.#depth > FILTER_DEPTH_MAX) this.#error(this.#peek(-1), `groups nested deeper than ${FILTER_DEPTH_MAX}`);
    const expr = this.#parseOr();
    this.#depth--;
    const close = this.#peek();
    if (close.type !== 'rparen') this.#fail(close, 'expected ")"');
    this.#next();
    return expr;
  }

  #parsePattern(): string {
    const t = this.#peek();
    if (t.type !== 'string') this.#fail(t, 'expected a string pattern');
    this.#next();
    return t.value;
  }

  parseValue(): Literal {
    const t = this.#peek();
    switch (t.type) {
      case 'string':
        this.#next();
        return { kind: 'string', value: t.value };
      case 'entitykey':
      case 'address':
        this.#next();
        return { kind: 'string', value: t.text, hex: true };
      case 'number':
        this.#next();
        return this.#numberLiteral(t);
      case 'decimal':
        this.#next();
        return this.#decimalLiteral(t);
      case 'ident':
        if (this.#isTypedStart(0)) return this.#parseTyped();
        if (this.#isBareBool(t)) {
          this.#next();
          return { kind: 'typed', type: 'bool', value: t.text === 'true', text: t.text };
        }
        break;
      default:
        break;
    }
    return this.#fail(t, 'expected a value');
  }

  #parseValues(): Literal[] {
    const open = this.#peek();
    if (open.type !== 'lparen') this.#fail(open, 'expected "("');
    this.#next();
    const cls = this.#valueClass();
    if (cls === undefined) this.#fail(this.#peek(), 'expected a value');
    // Participle converts the captured numbers only once the whole list has parsed, so a list
    // mixing kinds reports the mix before any out-of-range number.
    const items: Array<Literal | Token> = [];
    while (this.#valueClass() === cls) {
      const t = this.#peek();
      // Only a caller's `where`: the arkiv dialect answers the devnet's queries, whose IN lists name every
      // collection a node follows.
      if (this.#dialect === 'where' && ++this.#inValues > FILTER_IN_VALUES_MAX)
        this.#error(t, `more than ${FILTER_IN_VALUES_MAX} values in IN lists`);
      if (t.type === 'number') {
        this.#next();
        items.push(t);
      } else {
        items.push(this.parseValue());
      }
    }
    const close = this.#peek();
    if (close.type !== 'rparen') this.#fail(close);
    this.#next();
    return items.map((item) => ('kind' in item ? item : this.#numberLiteral(item)));
  }

  /** `flag = true`: the where dialect reads bare true/false as bool(true)/bool(false). */
  #isBareBool(t: Token): boolean {
    return this.#dialect === 'where' && t.type === 'ident' && (t.text === 'true' || t.text === 'false');
  }

  #valueClass(): ValueClass | undefined {
    const t = this.#peek();
    switch (t.type) {
      case 'string':
      case 'entitykey':
      case 'address':
        return 'string';
      case 'number':
      case 'decimal':
        return 'numeric';
      case 'ident':
        if (this.#isBareBool(t)) return 'bool';
        if (!this.#isTypedStart(0)) return undefined;
        if (t.text === 'str') return 'string';
        if (t.text === 'bool') return 'bool';
        return 'numeric';
      default:
        return undefined;
    }
  }

  #isTypedStart(offset: number): boolean {
    const t = this.#peek(offset);
    return (
      this.#dialect === 'where' &&
      t.type === 'ident' &&
      (TYPED_NAMES as readonly string[]).includes(t.text) &&
      this.#peek(offset + 1).type === 'lparen'
    );
  }

  #parseTyped(): Literal {
    const head = this.#next();
    const type = head.text as TypedLiteralType;
    this.#next(); // "("
    const arg = this.#peek();
    if (arg.type === 'rparen' || arg.type === 'eof') this.#fail(arg, 'expected a value');
    this.#next();
    const close = this.#peek();
    if (close.type !== 'rparen') this.#fail(close, 'expected ")"');
    this.#next();
    const text = this.#text.slice(head.start, close.end);
    const bad = (why: string): never =>
      this.#error(arg, `invalid ${type}() argument ${JSON.stringify(arg.text)}: ${why}`);
    switch (type) {
      case 'str':
        if (arg.type !== 'string') bad('expected a quoted string');
        return { kind: 'typed', type, value: arg.value, text };
      case 'bool':
        if (arg.type !== 'ident' || (arg.text !== 'true' && arg.text !== 'false')) bad('expected true or false');
        return { kind: 'typed', type, value: arg.text === 'true', text };
      case 'i32': {
        if ((arg.type !== 'number' && arg.type !== 'decimal') || !/^-?[0-9]+$/.test(arg.text))
          bad('expected an integer');
        const v = Number(arg.text);
        if (v < -(2 ** 31) || v > 2 ** 31 - 1) bad('out of int32 range');
        return { kind: 'typed', type, value: v === 0 ? 0 : v, text };
      }
      case 'uint': {
        if (arg.type !== 'number') bad('expected an unsigned integer');
        const v = BigInt(arg.text);
        if (v > UINT64_MAX) bad('out of uint64 range');
        // `value` is a JS number (lossy above 2^53); `text` keeps the exact digits.
        return { kind: 'typed', type, value: Number(v), text };
      }
      case 'f32': {
        if (arg.type !== 'number' && arg.type !== 'decimal') bad('expected a number');
        const v = Number(arg.text);
        if (!Number.isFinite(Math.fround(v))) bad('out of float32 range');
        return { kind: 'typed', type, value: v, text };
      }
    }
  }

  #numberLiteral(t: Token): Literal {
    const value = parseGoUint(t.text);
    if (typeof value !== 'bigint') this.#error(t, `invalid integer ${JSON.stringify(t.text)}: ${value.error}`);
    return { kind: 'number', value, text: t.text };
  }

  #decimalLiteral(t: Token): Literal {
    const value = Number(t.text);
    if (!Number.isFinite(value)) this.#error(t, `number ${t.text} is out of range`);
    return { kind: 'decimal', value, text: t.text };
  }

  #isOp(t: Token, type: TokenType, upper: string, lower: string): boolean {
    return t.type === type || isKeyword(t, upper, lower);
  }

  #peek(offset = 0): Token {
    // The lexer always ends the list with an eof token, so the clamped index always finds one.
    return defined(this.#tokens[Math.max(0, Math.min(this.#index + offset, this.#tokens.length - 1))], 'token');
  }

  #next(): Token {
    const t = this.#peek();
    if (this.#index < this.#tokens.length - 1) this.#index++;
    return t;
  }

  #skip(n: number): void {
    for (let i = 0; i < n; i++) this.#next();
  }

  #fail(t: Token, expected?: string): never {
    const shown = t.type === 'eof' ? '<EOF>' : t.text;
    const hint = expected === undefined ? '' : ` (${expected})`;
    return this.#error(t, `unexpected token ${JSON.stringify(shown)}${hint}`);
  }

  #error(t: Token, message: string): never {
    throw new QuerySyntaxError(this.#text, t.start, message);
  }
}

// Keywords are ordinary Ident tokens matched by exact text, so only the listed spellings count and
// `and = "x"` is a valid comparison on an attribute named "and".
function isKeyword(t: Token, upper: string, lower: string): boolean {
  return t.type === 'ident' && (t.text === upper || t.text === lower);
}
