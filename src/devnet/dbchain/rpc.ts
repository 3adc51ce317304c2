// The DB-chain generation of the devnet node: its registry's execution (executor.ts) plugged into the
// shared chain, and its JSON-RPC surface (arkiv-gen-d.md §4): arkiv_query with typed queries, select,
// limit and bound `b64:` cursors, arkiv_getEntity, arkiv_getEntityCount, and eth_call / eth_estimateGas
// on the registry with custom errors as revert data.
import { bytesToHex, concat, keccak256, numberToHex, stringToBytes, toBytes, type Address, type Hex } from 'viem';
import type { DevnetChain } from '../chain.ts';
import { RpcError, type ChainTx, type RegistryExecutor } from '../transactions.ts';
import { UNHANDLED, type DevnetProtocol } from '../node.ts';
import { Revert, execute, gasFor, viewCall } from './executor.ts';
import { compileDbQuery } from './query.ts';
import { CREATION_FLAGS, REGISTRY_ADDRESS, type Cell } from '../../chain/dbchain/index.ts';
import { DbEntityState, versionAt, type DbEntity } from './state.ts';

export const QUERY_DEFAULT_LIMIT = 100;
export const QUERY_MAX_LIMIT = 200;
const ZERO_ADDRESS: Address = '0x0000000000000000000000000000000000000000';

const SELECT_FIELDS = [
  'key',
  'owner',
  'creator',
  'createdAt',
  'updatedAt',
  'expiresAt',
  'creationFlags',
  'contentType',
  'payload',
  'attributeSchema',
] as const;
type SelectField = (typeof SELECT_FIELDS)[number];
interface Select {
  fields: Record<SelectField, boolean>;
  /** false: none; true: all; a list: those names. */
  attributes: boolean | string[];
}
const DEFAULT_SELECT: Select = {
  fields: Object.fromEntries(SELECT_FIELDS.map((f) => [f, f === 'key'])) as Record<SelectField, boolean>,
  attributes: false,
};
const FULL_SELECT: Select = {
  fields: Object.fromEntries(SELECT_FIELDS.map((f) => [f, f !== 'attributeSchema'])) as Record<SelectField, boolean>,
  attributes: true,
};

const invalid = (message: string): never => {
  throw new RpcError(-32602, `invalid params: ${message}`);
};

function readSelect(raw: unknown): Select {
  if (raw === undefined || raw === null) return DEFAULT_SELECT;
  if (typeof raw !== 'object' || Array.isArray(raw)) return invalid('select must be an object');
  const fields = Object.fromEntries(SELECT_FIELDS.map((f) => [f, false])) as Record<SelectField, boolean>;
  let attributes: Select['attributes'] = false;
  for (const [name, value] of Object.entries(raw)) {
    if (name === 'attributes') {
      if (typeof value === 'boolean') attributes = value;
      else if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
        const entries = Object.entries(value);
        if (entries.some(([, v]) => typeof v !== 'boolean')) invalid('select.attributes takes booleans');
        attributes = entries
          .filter(([, v]) => v)
          .map(([n]) => n)
          .sort();
      } else invalid('select.attributes must be a boolean or an object');
    } else if ((SELECT_FIELDS as readonly string[]).includes(name)) {
      if (typeof value !== 'boolean') invalid(`select.${name} must be a boolean`);
      fields[name as SelectField] = value as boolean;
    } else invalid(`unknown field \`${name}\` in select`);
  }
  return { fields, attributes };
}

/** The select's part of a cursor's binding (§4.3). */
function selectFingerprint(select: Select): Uint8Array {
  const flags = SELECT_FIELDS.map((f) => (select.fields[f] ? 1 : 0));
  if (select.attributes === false) return new Uint8Array([...flags, 0]);
  if (select.attributes === true) return new Uint8Array([...flags, 1]);
  return concat([
    new Uint8Array([...flags, 2]),
    ...select.attributes.map((n) => concat([stringToBytes(n), new Uint8Array([0])])),
  ]);
}

const u64be = (value: number | bigint) => toBytes(BigInt(value), { size: 8 });

/** The 8 bytes that tie a cursor to its query, block and select. */
export function cursorBinding(query: string, block: number, select: Select): Uint8Array {
  const text = stringToBytes(query);
  return toBytes(
    keccak256(
      concat([stringToBytes('arkiv.cursor'), u64be(text.length), text, u64be(block), selectFingerprint(select)]),
    ),
  ).subarray(0, 8);
}

function encodeCursor(binding: Uint8Array, position: number): string {
  return `b64:${Buffer.from(concat([binding, u64be(position)])).toString('base64url')}`;
}

function decodeCursor(raw: unknown, binding: Uint8Array): number {
  if (typeof raw !== 'string' || !raw.startsWith('b64:') || !/^[A-Za-z0-9_-]*$/.test(raw.slice(4)))
    throw new RpcError(-32005, 'cursor is malformed');
  const bytes = Buffer.from(raw.slice(4), 'base64url');
  if (bytes.length !== 16) throw new RpcError(-32005, 'cursor is malformed');
  if (!bytes.subarray(0, 8).equals(binding))
    throw new RpcError(-32005, 'cursor belongs to a different query, block or select');
  return Number(bytes.readBigUInt64BE(8));
}

/** A hex quantity, or a JSON number when `numbers` allows it. */
function readQuantity(value: unknown, name: string, numbers: boolean): number {
  if (numbers && typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  if (typeof value === 'string' && /^0x(0|[1-9a-fA-F][0-9a-fA-F]*)$/.test(value)) return Number(BigInt(value));
  return invalid(`${name} must be a ${numbers ? 'hex quantity or a number' : 'hex quantity'}`);
}

function blockUnavailable(requested: number, latest: number): never {
  const message = `block ${requested} is not available (latest ${latest})`;
  throw new RpcError(-32006, message, { requested, latest, message });
}

/** A block given as a JSON number (arkiv_getEntity, arkiv_getEntityCount, §4.6), the head when absent. */
function readNumberBlock(value: unknown, head: number): number {
  if (value === undefined || value === null) return head;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
    return invalid('block must be a JSON number');
  if (value > head) blockUnavailable(value, head);
  return value;
}

/** An attribute value as the node writes it in JSON (§4.1). */
function attributeJson(cell: Cell): unknown {
  switch (cell.type) {
    case 'u64':
    case 'u256':
      return numberToHex(cell.value);
    case 'dec':
      return decimalText(cell.value);
    case 'addr':
      return cell.value.toLowerCase();
    case 'tombstone':
      return null;
    case 'bytes':
      return bytesToHex(cell.value);
    default:
      return cell.value;
  }
}

function decimalText(scaled: bigint): string {
  const negative = scaled < 0n;
  const abs = negative ? -scaled : scaled;
  const whole = abs / 10n ** 18n;
  const fraction = (abs % 10n ** 18n).toString().padStart(18, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

function entityJson(entity: DbEntity, select: Select): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const { fields } = select;
  if (fields.key) out.key = entity.key;
  if (fields.owner) out.owner = entity.owner;
  if (fields.creator) out.creator = entity.creator;
  if (fields.createdAt) out.createdAt = numberToHex(entity.createdAt);
  if (fields.updatedAt) out.updatedAt = numberToHex(entity.updatedAt);
  if (fields.expiresAt) out.expiresAt = numberToHex(entity.expiresAt);
  if (fields.creationFlags)
    out.creationFlags = {
      readonly: (entity.creationFlags & CREATION_FLAGS.readonly) !== 0,
      permissionlessExtension: (entity.creationFlags & CREATION_FLAGS.permissionlessExtension) !== 0,
      raw: entity.creationFlags,
    };
  if (fields.contentType) out.contentType = entity.contentType;
  if (fields.payload) out.payload = entity.payload;
  if (fields.attributeSchema) out.attributeSchema = entity.attributes.map((a) => ({ name: a.name, type: a.type }));
  const wanted = select.attributes;
  if (wanted !== false) {
    out.attributes = entity.attributes
      .filter((a) => wanted === true || wanted.includes(a.name))
      .map((a) => ({ name: a.name, type: a.type, value: attributeJson(a) }));
  }
  return out;
}

const QUERY_OPTIONS = new Set(['atBlock', 'select', 'limit', 'cursor']);

export class DbChainProtocol implements DevnetProtocol {
  readonly name = 'dbchain';
  state = new DbEntityState();
  readonly registry: RegistryExecutor;

  constructor(readonly chainId: number) {
    this.registry = {
      address: REGISTRY_ADDRESS,
      reset: () => {
        this.state = new DbEntityState();
      },
      execute: (tx, block) => this.#mined(tx, block),
    };
  }

  #mined(tx: ChainTx, block: number) {
    try {
      const run = execute(this.state, this.chainId, tx.from, tx.input, block);
      if (run.gasUsed > tx.gas)
        return { status: 0 as const, gasUsed: tx.gas, logs: [], revertReason: `out of gas: ${run.gasUsed} needed` };
      run.commit();
      return { status: 1 as const, gasUsed: run.gasUsed, logs: run.logs };
    } catch (error) {
      if (!(error instanceof Revert)) throw error;
      // A revert still pays for its calldata, at most the gas it brought.
      let gasUsed = gasFor(tx.input);
      if (gasUsed > tx.gas) gasUsed = tx.gas;
      return { status: 0 as const, gasUsed, logs: [], revertReason: error.errorName };
    }
  }

  request(method: string, params: unknown[], chain: DevnetChain): unknown {
    const head = chain.head.number;
    switch (method) {
      case 'eth_call':
      case 'eth_estimateGas':
        return this.#call(method, params[0], head);
      case 'arkiv_query':
        return this.#query(params, head);
      case 'arkiv_getEntity': {
        const key = params[0];
        if (typeof key !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(key)) return invalid('key must be 0x and 32 bytes');
        const entity = this.state.at(key.toLowerCase() as Hex, readNumberBlock(params[1], head));
        return entity ? entityJson(entity, FULL_SELECT) : null;
      }
      case 'arkiv_getEntityCount': {
        const options = (params[0] ?? {}) as { query?: unknown; block?: unknown };
        if (typeof options !== 'object' || Array.isArray(options)) return invalid('expected an object');
        const matches = options.query === undefined ? () => true : compileDbQuery(options.query);
        const block = readNumberBlock(options.block, head);
        let count = 0;
        for (const record of this.state.records) {
          const entity = versionAt(record, block);
          if (entity && matches(entity)) count++;
        }
        return count;
      }
      default:
        return UNHANDLED;
    }
  }

  /** eth_call / eth_estimateGas to the registry: view calls at the head, `execute` dry-run in the next block. */
  #call(method: string, raw: unknown, head: number): unknown {
    const call = (raw ?? {}) as { from?: unknown; to?: unknown; data?: unknown; input?: unknown };
    if (typeof call.to !== 'string' || call.to.toLowerCase() !== REGISTRY_ADDRESS) return UNHANDLED;
    const data = (call.data ?? call.input ?? '0x') as Hex;
    if (typeof data !== 'string' || !/^0x([0-9a-fA-F]{2})*$/.test(data)) return invalid('data must be 0x hex');
    const from = (typeof call.from === 'string' ? call.from.toLowerCase() : ZERO_ADDRESS) as Address;
    const view = viewCall(this.state, data, head);
    if (view !== undefined) return method === 'eth_call' ? view : numberToHex(gasFor(data, 2_600n));
    try {
      const run = execute(this.state, this.chainId, from, data, head + 1);
      return method === 'eth_call' ? '0x' : numberToHex(run.gasUsed);
    } catch (error) {
      if (!(error instanceof Revert)) throw error;
      throw new RpcError(
        3,
        error.data === '0x' ? `execution reverted: ${error.errorName}` : 'execution reverted',
        error.data,
      );
    }
  }

  #query(params: unknown[], head: number) {
    const text = params[0];
    const matches = compileDbQuery(text);
    const raw = params[1] ?? {};
    if (typeof raw !== 'object' || Array.isArray(raw)) return invalid('options must be an object');
    const options = raw as Record<string, unknown>;
    for (const name of Object.keys(options)) if (!QUERY_OPTIONS.has(name)) invalid(`unknown field \`${name}\``);
    let block = head;
    if (options.atBlock !== undefined && options.atBlock !== null && options.atBlock !== 'latest') {
      block = readQuantity(options.atBlock, 'atBlock', false);
      if (block > head) blockUnavailable(block, head);
    }
    const limit = options.limit === undefined ? QUERY_DEFAULT_LIMIT : readQuantity(options.limit, 'limit', true);
    if (limit < 1 || limit > QUERY_MAX_LIMIT) invalid(`limit must be from 1 to ${QUERY_MAX_LIMIT}`);
    const select = readSelect(options.select);
    const binding = cursorBinding(text as string, block, select);
    const below =
      options.cursor === undefined || options.cursor === null ? Infinity : decodeCursor(options.cursor, binding);
    const data: Record<string, unknown>[] = [];
    let last = 0;
    let more = false;
    const records = this.state.records;
    for (let i = Math.min(records.length, below - 1) - 1; i >= 0; i--) {
      const record = records[i];
      const entity = record && versionAt(record, block);
      if (!record || !entity || !matches(entity)) continue;
      if (data.length === limit) {
        more = true;
        break;
      }
      data.push(entityJson(entity, select));
      last = record.id;
    }
    const page: { data: Record<string, unknown>[]; blockNumber: Hex; cursor?: string } = {
      data,
      blockNumber: numberToHex(block),
    };
    if (more) page.cursor = encodeCursor(binding, last);
    return page;
  }
}
