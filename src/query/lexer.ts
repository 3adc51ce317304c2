// Tokenizer for the Arkiv query language, a transcription of the participle lexer in the node's
// `query/language.go`; used by parser.ts for both the arkiv and the where dialect.

import { QuerySyntaxError, type Dialect } from './ast.ts';

export type TokenType =
  | 'lparen'
  | 'rparen'
  | 'and'
  | 'or'
  | 'neq'
  | 'eq'
  | 'geq'
  | 'leq'
  | 'gt'
  | 'lt'
  | 'notglob'
  | 'glob'
  | 'not'
  | 'entitykey'
  | 'address'
  | 'string'
  | 'number'
  | 'decimal'
  | 'ident'
  | 'meta'
  | 'all'
  | 'star'
  | 'eof';

export interface Token {
  type: TokenType;
  /** Source text of the token. */
  text: string;
  /** Decoded value: the unquoted string for string tokens, otherwise the source text. */
  value: string;
  start: number;
  end: number;
}

interface Rule {
  type: TokenType | 'ws';
  re: RegExp;
}

// Participle's simple lexer tries the rules in this order at each offset and takes the first that
// matches (not the longest), so the order is part of the language: `0x` followed by 50 hex digits
// lexes as an Address plus a trailing Number, and `$keys` as `$key` plus an Ident.
// Go's `.` excludes only "\n", JS's also excludes "\r" and U+2028/9, hence `[^\n]` in the string rule.
const ARKIV_RULES: Rule[] = [
  { type: 'ws', re: /[ \t\n\r]+/y },
  { type: 'lparen', re: /\(/y },
  { type: 'rparen', re: /\)/y },
  { type: 'and', re: /&&/y },
  { type: 'or', re: /\|\|/y },
  { type: 'neq', re: /!=/y },
  { type: 'eq', re: /=/y },
  { type: 'geq', re: />=/y },
  { type: 'leq', re: /<=/y },
  { type: 'gt', re: />/y },
  { type: 'lt', re: /</y },
  { type: 'notglob', re: /!~/y },
  { type: 'glob', re: /~/y },
  { type: 'not', re: /!/y },
  { type: 'entitykey', re: /0x[a-fA-F0-9]{64}/y },
  { type: 'address', re: /0x[a-fA-F0-9]{40}/y },
  { type: 'string', re: /"(?:[^"\\]|\\[^\n])*"/y },
  { type: 'number', re: /[0-9]+/y },
  { type: 'ident', re: /[\p{L}_][\p{L}\p{N}_]*/uy },
  { type: 'meta', re: /\$owner/y },
  { type: 'meta', re: /\$creator/y },
  { type: 'meta', re: /\$key/y },
  { type: 'meta', re: /\$expiration/y },
  { type: 'meta', re: /\$sequence/y },
  { type: 'all', re: /\$all/y },
  { type: 'star', re: /\*/y },
];

// The where dialect adds single-quoted strings and signed / fractional / exponent numbers. The
// numeric rule sits where Number was, so every arkiv query still lexes to the same tokens.
const WHERE_RULES: Rule[] = ARKIV_RULES.flatMap((rule): Rule[] => {
  if (rule.type === 'string') return [rule, { type: 'string', re: /'(?:[^'\\]|\\[\s\S])*'/y }];
  if (rule.type === 'number') return [{ type: 'decimal', re: /-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y }];
  return [rule];
});

export function tokenize(text: string, dialect: Dialect): Token[] {
  const rules = dialect === 'where' ? WHERE_RULES : ARKIV_RULES;
  const tokens: Token[] = [];
  let pos = 0;
  outer: while (pos < text.length) {
    for (const rule of rules) {
      rule.re.lastIndex = pos;
      const m = rule.re.exec(text);
      if (m === null || m[0].length === 0) continue;
      const raw = m[0];
      const end = pos + raw.length;
      if (rule.type !== 'ws') {
        tokens.push(makeToken(text, rule.type, raw, pos, end));
      }
      pos = end;
      continue outer;
    }
    // Participle reports the unlexable remainder; keep it short enough to read.
    const sample = [...text.slice(pos)].slice(0, 16).join('');
    throw new QuerySyntaxError(text, pos, `invalid input text ${JSON.stringify(sample)}`);
  }
  tokens.push({ type: 'eof', text: '', value: '', start: text.length, end: text.length });
  return tokens;
}

function makeToken(source: string, type: TokenType, raw: string, start: number, end: number): Token {
  if (type === 'string') {
    // Participle's Unquote mapper runs while lexing, so a bad escape is reported before any
    // grammar error further left or right.
    const decoded = raw.startsWith("'") ? unquoteSingle(raw) : goUnquote(raw);
    if (typeof decoded !== 'string') {
      throw new QuerySyntaxError(source, start, `invalid quoted string ${raw}: ${decoded.error}`);
    }
    return { type, text: raw, value: decoded, start, end };
  }
  if (type === 'decimal' && /^[0-9]+$/.test(raw)) {
    return { type: 'number', text: raw, value: raw, start, end };
  }
  return { type, text: raw, value: raw, start, end };
}

const SIMPLE_ESCAPES: Record<string, number> = {
  a: 0x07,
  b: 0x08,
  f: 0x0c,
  n: 0x0a,
  r: 0x0d,
  t: 0x09,
  v: 0x0b,
  '\\': 0x5c,
  '"': 0x22,
};

const utf8Encoder = new TextEncoder();
const strictUtf8Decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Go's strconv.Unquote for a double-quoted literal. `\x` and octal escapes produce raw bytes in Go;
 * we accumulate bytes the same way and then require valid UTF-8, because a JS string cannot hold the
 * invalid byte sequences Go would accept.
 */
export function goUnquote(raw: string): string | { error: string } {
  const body = raw.slice(1, -1);
  if (!body.includes('\\') && !body.includes('\n')) return body;
  const bytes: number[] = [];
  const cps = [...body];
  for (let i = 0; i < cps.length; i++) {
    const c = cps[i];
    if (c === undefined) break;
    if (c === '\n') return { error: 'invalid syntax' };
    if (c !== '\\') {
      for (const b of utf8Encoder.encode(c)) bytes.push(b);
      continue;
    }
    const e = cps[++i];
    if (e === undefined) return { error: 'invalid syntax' };
    const simple = SIMPLE_ESCAPES[e];
    if (simple !== undefined) {
      bytes.push(simple);
    } else if (e === 'x' || e === 'u' || e === 'U') {
      const n = e === 'x' ? 2 : e === 'u' ? 4 : 8;
      const digits = cps.slice(i + 1, i + 1 + n).join('');
      if (digits.length !== n || !/^[0-9a-fA-F]+$/.test(digits)) return { error: 'invalid syntax' };
      i += n;
      const v = parseInt(digits, 16);
      if (e === 'x') {
        bytes.push(v);
      } else {
        if (v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return { error: 'invalid syntax' };
        for (const b of utf8Encoder.encode(String.fromCodePoint(v))) bytes.push(b);
      }
    } else if (e >= '0' && e <= '7') {
      const digits = cps.slice(i, i + 3).join('');
      if (!/^[0-7]{3}$/.test(digits)) return { error: 'invalid syntax' };
      const v = parseInt(digits, 8);
      if (v > 255) return { error: 'invalid syntax' };
      bytes.push(v);
      i += 2;
    } else {
      return { error: 'invalid syntax' };
    }
  }
  try {
    return strictUtf8Decoder.decode(new Uint8Array(bytes));
  } catch {
    return { error: 'escapes produce invalid UTF-8, which is not supported' };
  }
}

/** Where-dialect single-quoted string: only `\'` and `\\` are escapes. */
function unquoteSingle(raw: string): string | { error: string } {
  const body = raw.slice(1, -1);
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === undefined) break;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const e = body[++i];
    if (e !== "'" && e !== '\\') return { error: "only \\' and \\\\ escapes are allowed in single-quoted strings" };
    out += e;
  }
  return out;
}
