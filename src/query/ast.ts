// Syntax tree and error type of the Arkiv query language, shared by the devnet's `arkiv_query`
// (arkiv dialect) and the vector engine's `where` filters (where dialect).

export type Dialect = 'arkiv' | 'where';

export type MetaAttribute = '$key' | '$owner' | '$creator' | '$expiration' | '$sequence';

export const META_ATTRIBUTES: readonly MetaAttribute[] = ['$key', '$owner', '$creator', '$expiration', '$sequence'];

export function isMetaAttribute(name: string): name is MetaAttribute {
  return (META_ATTRIBUTES as readonly string[]).includes(name);
}

// `hex: true` marks an unquoted 0x…40 / 0x…64 literal; the node treats it exactly like a quoted string,
// but keeping the flag lets formatQuery reproduce what the user wrote.
export type StringLiteral = { kind: 'string'; value: string; hex?: true };
export type NumberLiteral = { kind: 'number'; value: bigint; text: string };
export type DecimalLiteral = { kind: 'decimal'; value: number; text: string };
export type TypedLiteralType = 'str' | 'i32' | 'uint' | 'f32' | 'bool';
export type TypedLiteral = { kind: 'typed'; type: TypedLiteralType; value: string | number | boolean; text: string };

export type Literal = StringLiteral | NumberLiteral | DecimalLiteral | TypedLiteral;

export type CompareOp = '=' | '!=' | '<' | '<=' | '>' | '>=';

export type QueryExpr =
  | { type: 'all' }
  | { type: 'or'; items: QueryExpr[] }
  | { type: 'and'; items: QueryExpr[] }
  | { type: 'not'; expr: QueryExpr }
  | { type: 'compare'; op: CompareOp; attribute: string; value: Literal; position: number }
  | { type: 'in'; negated: boolean; attribute: string; values: Literal[]; position: number }
  | { type: 'glob'; negated: boolean; attribute: string; pattern: string; position: number };

// The message carries the node's `line:col: ` prefix (1-based, columns counted in code points, as
// participle does) so devnet errors read like the real node's; `position` is a 0-based UTF-16 offset
// into the query text so callers can slice or underline it.
export class QuerySyntaxError extends Error {
  readonly position: number;

  constructor(text: string, position: number, message: string) {
    const { line, column } = lineColumn(text, position);
    super(`${line}:${column}: ${message}`);
    this.name = 'QuerySyntaxError';
    this.position = position;
  }
}

function lineColumn(text: string, position: number): { line: number; column: number } {
  const before = text.slice(0, position);
  const lastNewline = before.lastIndexOf('\n');
  const line = before.split('\n').length;
  const column = [...before.slice(lastNewline + 1)].length + 1;
  return { line, column };
}
