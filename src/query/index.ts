// Public surface of the Arkiv query language module: the devnet imports the arkiv dialect and
// compileArkivQuery, the vector engine imports the where dialect parser.

export {
  QuerySyntaxError,
  META_ATTRIBUTES,
  isMetaAttribute,
  type Dialect,
  type MetaAttribute,
  type Literal,
  type StringLiteral,
  type NumberLiteral,
  type DecimalLiteral,
  type TypedLiteral,
  type TypedLiteralType,
  type CompareOp,
  type QueryExpr,
} from './ast.ts';
export { parseQuery, parseLiteral, type ParseOptions } from './parser.ts';
export { formatQuery, formatLiteral } from './format.ts';
export { compileArkivQuery, compareBytewise, type QueryableEntity, type EntityPredicate } from './evaluate.ts';
export { globMatch, pathMatch, type PathMatchResult } from './glob.ts';
export { FILTER_DEPTH_MAX, FILTER_IN_VALUES_MAX, FILTER_TERMS_MAX } from './limits.ts';
