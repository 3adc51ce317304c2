// On-chain schema v1 carried onto DB-chain cells (ARCHITECTURE.md §8.3): the same attribute names and
// payload bytes, each declared type on the typed cell that keeps its order and equality, so other DB-chain
// clients can filter our entities with the node's own predicates.
//
// | schema type | v1 numeric value        | DB-chain cell                      |
// | str         | (string attribute)      | str                                |
// | i32         | v + 2^31                | i32 v (sign-extended word)         |
// | uint        | v                       | u64 v                              |
// | f32         | order-preserving bits b | u64 b                              |
// | bool        | 0 / 1                   | bool                               |
//
// Read back, i32 and bool cells become the v1 numeric values and u64 stays as is, so the indexer and the
// collection codecs see one representation on both generations. Cells of other types (u256, dec, addr,
// key, bytes32) are never ours and are left out. What the DB-chain forbids and schema v1 allows (str values
// over 128 bytes, more than 30 user cells, names outside `[a-z][a-z0-9._-]*`, reserved words, a vector id
// over 128 bytes) is refused here before signing; an operation that breaks the node's rules on read is
// skipped and counted by the block decoder.
import {
  ATTR_COLLECTION,
  ATTR_ID,
  ATTR_TYPE,
  COLLECTION_CONTENT_TYPE,
  InvalidArgumentError,
} from '../../collections/index.ts';
import type { CreateOp, NumericAttribute, StringAttribute } from '../operations.ts';
import { MAX_USER_CELLS_PER_CREATE, checkName, type Cell } from './attributes.ts';
import { DbChainCodecError } from './errors.ts';

const I32_OFFSET = 1n << 31n;
/** The reserved string attributes every vector entity carries: what is left for declared attributes. */
export const DECLARED_ATTRIBUTES_MAX = MAX_USER_CELLS_PER_CREATE - 3;

/** The user cells of a content (system cells apart), unsorted. */
export function contentCells(content: Pick<CreateOp, 'stringAttributes' | 'numericAttributes'>): Cell[] {
  return [
    ...content.stringAttributes.map((a): Cell => ({ name: a.key, type: 'str', value: a.value })),
    ...content.numericAttributes.map(numericCell),
  ];
}

function numericCell(a: NumericAttribute): Cell {
  switch (a.type) {
    case 'i32':
      return { name: a.key, type: 'i32', value: Number(a.value - I32_OFFSET) };
    case 'bool':
      return { name: a.key, type: 'bool', value: a.value === 1n };
    default:
      return { name: a.key, type: 'u64', value: a.value };
  }
}

/** The v1 attribute lists of a set of cells (the inverse of contentCells; foreign types left out). */
export function cellAttributes(cells: readonly Cell[]): {
  stringAttributes: StringAttribute[];
  numericAttributes: NumericAttribute[];
} {
  const stringAttributes: StringAttribute[] = [];
  const numericAttributes: NumericAttribute[] = [];
  for (const cell of cells) {
    if (cell.name.startsWith('$')) continue;
    if (cell.type === 'str') stringAttributes.push({ key: cell.name, value: cell.value });
    else if (cell.type === 'i32')
      numericAttributes.push({ key: cell.name, value: BigInt(cell.value) + I32_OFFSET, type: 'i32' });
    else if (cell.type === 'bool')
      numericAttributes.push({ key: cell.name, value: cell.value ? 1n : 0n, type: 'bool' });
    else if (cell.type === 'u64') numericAttributes.push({ key: cell.name, value: cell.value });
  }
  return { stringAttributes, numericAttributes };
}

/**
 * Refuses, before signing, a content the DB-chain cannot hold although schema v1 allows it: the cell
 * rules themselves are the codec's (names, str length, count); here, what the schema adds — a collection
 * definition declaring attributes the chain could never carry.
 * @throws InvalidArgumentError naming what the DB-chain forbids
 */
export function checkSchemaContent(content: CreateOp): void {
  if (content.contentType !== COLLECTION_CONTENT_TYPE) return;
  let declared: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(new TextDecoder().decode(content.payload)) as { attributes?: Record<string, unknown> };
    declared = parsed.attributes ?? {};
  } catch {
    return;
  }
  const names = Object.keys(declared);
  if (names.length > DECLARED_ATTRIBUTES_MAX)
    throw new InvalidArgumentError(
      `the DB-chain carries at most ${DECLARED_ATTRIBUTES_MAX} declared attributes (30 user cells less ${ATTR_TYPE}, ${ATTR_COLLECTION}, ${ATTR_ID}); this definition declares ${names.length}`,
    );
  for (const name of names) {
    try {
      checkName(name, true);
    } catch (error) {
      if (error instanceof DbChainCodecError)
        throw new InvalidArgumentError(`attribute ${name} cannot be written on the DB-chain: ${error.message}`);
      throw error;
    }
  }
}
