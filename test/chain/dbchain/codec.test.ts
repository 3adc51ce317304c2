// The DB-chain codec against real recorded traffic (five cheesecake-devnet transactions with their
// receipts' logs, and the decoder's per-tag vectors: fixtures/, origin in each file) and against itself
// (fast-check round trips), plus every refusal naming the node error it stands for.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  bytesToHex,
  concat,
  encodeAbiParameters,
  keccak256,
  stringToBytes,
  toFunctionSelector,
  type Address,
  type Hex,
} from 'viem';
import {
  DbChainCodecError,
  EVENT_TOPICS,
  OPERATION_STRUCTS,
  SELECTORS,
  decodeCell,
  decodeExecute,
  decodeOperation,
  decodeRegistryError,
  decodeRegistryEvent,
  decodeRevertReason,
  decodeWireExecute,
  describeRegistryError,
  encodeCell,
  encodeExecute,
  encodeName,
  encodeOperation,
  encodeRegistryError,
  encodeRegistryEvent,
  encodeRevertReason,
  entityKey,
  errorAbi,
  expiryOverflowReason,
  resolveExpiry,
  sortCells,
  splitCreateCells,
  type Cell,
  type RegistryOperation,
} from '../../../src/chain/dbchain/index.ts';
import { explainRegistryRevert } from '../../../src/chain/dbchain/writer.ts';

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`fixtures/${name}`, import.meta.url), 'utf8'));
interface RecordedTx {
  label: string;
  blockNumber: number;
  from: Address;
  chainId: number;
  input: Hex;
  logs: { address: Address; topics: Hex[]; data: Hex }[];
}
const cheesecake = fixture('cheesecake.json') as { transactions: RecordedTx[] };
const tx = (label: string) => {
  const found = cheesecake.transactions.find((t) => t.label === label);
  assert.ok(found, label);
  return found;
};

/** Calls `run` and asserts it throws the codec error `code`. */
function refused(code: string, run: () => unknown): void {
  assert.throws(run, (error: unknown) => {
    assert.ok(error instanceof DbChainCodecError, `expected DbChainCodecError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    return true;
  });
}

test('selectors, topics and custom-error selectors are the reference values', () => {
  assert.deepEqual(
    { ...SELECTORS },
    {
      execute: '0x49650044',
      entityNonce: '0x36917bfd',
      customAttributeNames: '0x58d5418a',
      attributeTypeId: '0x434fb6f3',
      purgeExpired: '0xad9e3f1c',
      legacyExecute: '0xba8ccf92',
    },
  );
  assert.deepEqual(
    { ...EVENT_TOPICS },
    {
      created: '0xb282d7c494b8899aa8015cd07be621530beb03409eb8c5e8fdc1411ba64356a5',
      patched: '0xe986ee220b2d7947a009d9389d8400b2ac82d3b430a9f72700a0975d3d5a34fe',
      extended: '0x10dc3526654c9ba4e2370b1bfcbc0de087d141a5694b3d3305d37df7e6705d4b',
      transferred: '0x0b659dccc8eb950324170e8d9598af5ee04ee070883eb28651a96788721fbf83',
      deleted: '0x4059b76c47e1ecc40ba88e649b654f716515eb358c3ce83c803820e3b3130cc3',
    },
  );
  const selectors = Object.fromEntries(
    errorAbi.map((e) => [e.name, toFunctionSelector(`${e.name}(${e.inputs.map((i) => i.type).join(',')})`)]),
  );
  assert.deepEqual(selectors, {
    EmptyBatch: '0xc2e5347d',
    InvalidOpType: '0x6bd847c6',
    NonCanonicalOperationData: '0x89bc9448',
    AttributesNotSorted: '0x3206846a',
    TooManyAttributes: '0xd7ce981c',
    EmptyMutations: '0x78a58538',
    TombstoneInCreate: '0x42501bac',
    TombstoneValueNotEmpty: '0x019f59df',
    SystemAttributeNotWritable: '0x79b2b398',
    InvalidValueType: '0x639fb7ab',
    EntityNotFound: '0x66a89f2a',
    EntityExpired: '0x2411cf56',
    NotOwner: '0xa3221ef2',
    ReadOnlyEntity: '0xd858a824',
    ReservedCreationFlags: '0xdcc18611',
    ExpiryDeadOnArrival: '0x26049d1c',
    ExpiryNotExtended: '0x33268a0d',
    TransferToZeroAddress: '0x8742c67c',
    TransferToSelf: '0xe324b169',
    Ident32InvalidByte: '0x276f7798',
    Ident32Empty: '0xc109aef4',
  });
});

test('every recorded transaction decodes, and re-encodes to its calldata and each operationData byte for byte', () => {
  for (const t of cheesecake.transactions) {
    const ops = decodeExecute(t.input);
    const wire = decodeWireExecute(t.input);
    assert.equal(ops.length, t.logs.length, `${t.label}: one log per op`);
    ops.forEach((op, i) => {
      assert.deepEqual(encodeOperation(op, false), wire[i], `${t.label} op ${i}`);
    });
    assert.equal(encodeExecute(ops, false), t.input.toLowerCase(), t.label);
    for (const log of t.logs) assert.deepEqual(encodeRegistryEvent(defined(decodeRegistryEvent(log))), log);
  }
});

function defined<T>(v: T | undefined): T {
  assert.ok(v !== undefined);
  return v;
}

test('decoded creates agree with their logs: keys from sender, entity nonce and salt, owner, expiry, flags', () => {
  const cases: [string, bigint[]][] = [
    ['create', [646n]],
    ['batch', [647n, 648n]],
  ];
  for (const [label, nonces] of cases) {
    const t = tx(label);
    const ops = decodeExecute(t.input);
    const creates = ops.filter((o): o is Extract<RegistryOperation, { op: 'create' }> => o.op === 'create');
    assert.equal(creates.length, nonces.length);
    creates.forEach((op, i) => {
      const log = defined(decodeRegistryEvent(defined(t.logs[ops.indexOf(op)])));
      assert.equal(log.event, 'created');
      if (log.event !== 'created') return;
      const nonce = defined(nonces[i]);
      assert.equal(entityKey({ chainId: t.chainId, owner: t.from, nonce, salt: op.salt }), log.entityKey);
      assert.equal(log.owner, t.from);
      assert.equal(resolveExpiry(op, BigInt(t.blockNumber)), log.expiresAt);
      assert.equal(op.creationFlags, log.creationFlags);
    });
  }
  const create = decodeExecute(tx('create').input)[0];
  assert.ok(create?.op === 'create');
  assert.equal(create.salt, 0xfe216ccae479f6aeed5985d491fa8e16n);
  assert.equal(create.minLifetime, 30n);
  assert.equal(create.creationFlags, 1);
  const content = splitCreateCells(create.attributes);
  assert.equal(content.contentType, 'application/json');
  assert.equal(new TextDecoder().decode(content.payload), '{"probe":"smoke-readonly","run":"rmsysl2em"}');
  assert.deepEqual(content.attributes, [
    { name: 'kind', type: 'str', value: 'smoke' },
    { name: 'run', type: 'str', value: 'rmsysl2em' },
  ]);
  const batch = decodeExecute(tx('batch').input);
  assert.deepEqual(
    batch.map((o) => o.op),
    ['create', 'create', 'patch'],
  );
  const first = batch[0];
  assert.ok(first?.op === 'create');
  assert.deepEqual(splitCreateCells(first.attributes).attributes, [
    { name: 'kind', type: 'str', value: 'smoke-batch' },
    { name: 'rank', type: 'i32', value: 1 },
    { name: 'run', type: 'str', value: 'rmsysl2em' },
  ]);
});

test('decoded patch, extend and delete agree with their logs', () => {
  const patch = tx('patch');
  const [p] = decodeExecute(patch.input);
  const patchLog = defined(decodeRegistryEvent(defined(patch.logs[0])));
  assert.ok(p?.op === 'patch' && patchLog.event === 'patched');
  assert.equal(p.entityKey, patchLog.entityKey);
  assert.equal(patchLog.owner, patch.from);
  assert.deepEqual(p.mutations, [
    { name: 'flag', type: 'tombstone' },
    { name: 'rank', type: 'i32', value: 2 },
    { name: 'status', type: 'str', value: 'patched' },
  ]);
  const extend = tx('extend_expiry');
  const [e] = decodeExecute(extend.input);
  const extendLog = defined(decodeRegistryEvent(defined(extend.logs[0])));
  assert.ok(e?.op === 'extend' && extendLog.event === 'extended');
  assert.equal(e.entityKey, extendLog.entityKey);
  assert.equal(resolveExpiry(e, BigInt(extend.blockNumber)), 222645n);
  assert.equal(extendLog.expiresAt, 222645n);
  const del = tx('delete');
  const [d] = decodeExecute(del.input);
  const deleteLog = defined(decodeRegistryEvent(defined(del.logs[0])));
  assert.ok(d?.op === 'delete' && deleteLog.event === 'deleted');
  assert.equal(d.entityKey, deleteLog.entityKey);
  assert.equal(deleteLog.owner, del.from);
});

test('the per-tag operation vectors decode to what they state and re-encode exactly', () => {
  const { vectors } = fixture('operation-vectors.json') as {
    vectors: {
      tag: number;
      operationData: Hex;
      expect: Record<string, unknown>;
      expectPayloadSize: number;
      expectAttributes: { key: string; valueTypeName: string; value: string }[];
    }[];
  };
  assert.equal(vectors.length, 5);
  for (const v of vectors) {
    const op = decodeOperation({ operation: v.tag, operationData: v.operationData });
    assert.deepEqual(encodeOperation(op, false), { operation: v.tag, operationData: v.operationData });
    const key = v.expect.entityKey as string | null;
    if (key) assert.equal((op as { entityKey: Hex }).entityKey, key);
    if (op.op === 'create' || op.op === 'extend') {
      assert.equal(op.expiresAt.toString(), v.expect.expiresAt);
      assert.equal(op.minLifetime.toString(), v.expect.minLifetime);
    }
    if (op.op === 'transfer') assert.equal(op.newOwner, (v.expect.newOwner as string).toLowerCase());
    const cells = op.op === 'create' ? op.attributes : op.op === 'patch' ? op.mutations : [];
    assert.equal(cells.length, v.expect.attributeCount);
    const user = op.op === 'create' ? splitCreateCells(cells) : { attributes: cells, payload: new Uint8Array() };
    assert.equal(user.payload.length, v.expectPayloadSize);
    assert.deepEqual(
      user.attributes.map((c) => ({
        key: c.name,
        valueTypeName: c.type,
        value: 'value' in c ? String(c.value) : '',
      })),
      v.expectAttributes,
    );
    if (op.op === 'create') {
      assert.equal(op.salt.toString(), v.expect.salt);
      assert.equal(op.creationFlags, v.expect.creationFlags);
      assert.equal(splitCreateCells(cells).contentType, v.expect.contentType);
    }
  }
});

test('key derivation reproduces the reference worked examples for Tiramisu', () => {
  const owner = '0x1111111111111111111111111111111111111111';
  assert.equal(
    entityKey({ chainId: 7738577, owner, nonce: 0n, salt: 0n }),
    '0xede6f7a7d22551741202fc9e3d5faa0f0a6d619cff53b973de889f78a534dda0',
  );
  assert.equal(
    entityKey({ chainId: 7738577, owner, nonce: 7n, salt: 4660n }),
    '0xade99a2480e22154337e8d8e872b3aa3cca2873c79e87dfa4936fba28e51c6df',
  );
});

test('value encodings are the documented bytes', () => {
  const value = (cell: Cell) => encodeCell(cell).value;
  assert.equal(value({ name: 'a', type: 'i32', value: -1 }), `0x${'f'.repeat(64)}`);
  assert.equal(value({ name: 'a', type: 'i32', value: 5 }), `0x${'0'.repeat(63)}5`);
  assert.equal(value({ name: 'a', type: 'u64', value: 1800n }), `0x${'0'.repeat(61)}708`);
  assert.equal(value({ name: 'a', type: 'str', value: "maker's" }), bytesToHex(new TextEncoder().encode("maker's")));
  assert.equal(value({ name: 'a', type: 'dec', value: 3_500_000_000_000_000_000n }).slice(-16), '30927f74c9de0000');
  assert.equal(
    value({ name: 'a', type: 'dec', value: -1_500_000_000_000_000_000n }).slice(-20),
    'ffffeb2eedf284ea0000',
  );
  assert.equal(value({ name: 'a', type: 'bool', value: true }), `0x${'0'.repeat(63)}1`);
  assert.equal(
    value({ name: 'a', type: 'addr', value: '0xAbcd000000000000000000000000000000001234' }),
    `0x${'0'.repeat(24)}abcd000000000000000000000000000000001234`,
  );
});

const nameArb = fc.stringMatching(/^[a-z][a-z0-9._]{0,12}$/);
const cellArb: fc.Arbitrary<Cell> = fc
  .oneof(
    fc.record({ name: nameArb, type: fc.constant('str' as const), value: fc.string({ maxLength: 40 }) }),
    fc.record({
      name: nameArb,
      type: fc.constant('i32' as const),
      value: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
    }),
    fc.record({
      name: nameArb,
      type: fc.constant('u64' as const),
      value: fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
    }),
    fc.record({
      name: nameArb,
      type: fc.constant('u256' as const),
      value: fc.bigInt({ min: 0n, max: (1n << 256n) - 1n }),
    }),
    fc.record({
      name: nameArb,
      type: fc.constant('dec' as const),
      value: fc.bigInt({ min: -(1n << 255n), max: (1n << 255n) - 1n }),
    }),
    fc.record({ name: nameArb, type: fc.constant('bool' as const), value: fc.boolean() }),
    fc.record({
      name: nameArb,
      type: fc.constant('addr' as const),
      value: fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => bytesToHex(b) as Address),
    }),
    fc.record({
      name: nameArb,
      type: fc.constantFrom('key' as const, 'bytes32' as const),
      value: fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => bytesToHex(b)),
    }),
  )
  .map((c) => ({ ...c }) as Cell);
/** Unique names in the node's order (reserved words dropped: the strict encoder refuses them). */
const cellsArb = (max: number) =>
  fc
    .uniqueArray(cellArb, { selector: (c) => c.name, maxLength: max })
    .map((cells) =>
      sortCells(
        cells
          .filter((c) => !['and', 'or', 'not', 'key', 'str', 'dec', 'bool', 'i32', 'u64'].includes(c.name))
          .map((c) => ({ ...c, name: encodeName(c.name, false), cell: c })),
      ).map((c) => c.cell),
    );
const keyArb = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => bytesToHex(b));
const u64Arb = fc.bigInt({ min: 0n, max: (1n << 64n) - 1n });
const opArb: fc.Arbitrary<RegistryOperation> = fc
  .oneof(
    fc.record({
      op: fc.constant('create' as const),
      salt: fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }),
      expiresAt: u64Arb,
      minLifetime: u64Arb,
      creationFlags: fc.integer({ min: 0, max: 3 }),
      attributes: fc
        .tuple(fc.uint8Array({ maxLength: 300 }), fc.string({ maxLength: 30 }), cellsArb(30))
        .map(([payload, contentType, cells]) =>
          sortCells(
            [
              { name: '$contentType', type: 'str', value: contentType } as Cell,
              { name: '$payload', type: 'bytes', value: payload } as Cell,
              ...cells,
            ].map((cell) => ({ name: encodeName(cell.name, false), cell })),
          ).map((c) => c.cell),
        ),
    }),
    fc.record({
      op: fc.constant('patch' as const),
      entityKey: keyArb,
      mutations: cellsArb(32).filter((c) => c.length > 0),
    }),
    fc.record({ op: fc.constant('extend' as const), entityKey: keyArb, expiresAt: u64Arb, minLifetime: u64Arb }),
    fc.record({
      op: fc.constant('transfer' as const),
      entityKey: keyArb,
      newOwner: fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => bytesToHex(b) as Address),
    }),
    fc.record({ op: fc.constant('delete' as const), entityKey: keyArb }),
  )
  .map((o) => ({ ...o }) as RegistryOperation);

test('property: any batch encodes, decodes to itself and re-encodes to the same bytes', () => {
  fc.assert(
    fc.property(fc.array(opArb, { minLength: 1, maxLength: 4 }), (ops) => {
      const calldata = encodeExecute(ops);
      const decoded = decodeExecute(calldata);
      assert.equal(encodeExecute(decoded), calldata);
      assert.deepEqual(decoded, normalise(ops));
    }),
    { numRuns: 150 },
  );
});

/** What decoding gives back: lowercase keys and addresses. */
function normalise(ops: RegistryOperation[]): RegistryOperation[] {
  const cell = (c: Cell): Cell =>
    c.type === 'addr' || c.type === 'key' || c.type === 'bytes32'
      ? ({ ...c, value: c.value.toLowerCase() } as Cell)
      : c;
  return ops.map((op) => {
    const o = { ...op } as Record<string, unknown>;
    if ('entityKey' in op) o.entityKey = op.entityKey.toLowerCase();
    if (op.op === 'transfer') o.newOwner = op.newOwner.toLowerCase();
    if (op.op === 'create') o.attributes = op.attributes.map(cell);
    if (op.op === 'patch') o.mutations = op.mutations.map(cell);
    return o as RegistryOperation;
  });
}

test('property: a cell decodes to itself', () => {
  fc.assert(
    fc.property(cellArb, (cell) => {
      const lower = 'value' in cell && typeof cell.value === 'string' && cell.type !== 'str';
      assert.deepEqual(
        decodeCell(encodeCell(cell, false)),
        lower ? { ...cell, value: cell.value.toLowerCase() } : cell,
      );
    }),
  );
});

const create = (attributes: Cell[], extra: Partial<Extract<RegistryOperation, { op: 'create' }>> = {}) =>
  ({
    op: 'create',
    salt: 1n,
    expiresAt: 0n,
    minLifetime: 10n,
    creationFlags: 0,
    attributes: [
      { name: '$contentType', type: 'str', value: 'text/plain' },
      { name: '$payload', type: 'bytes', value: new Uint8Array([1]) },
      ...attributes,
    ],
    ...extra,
  }) satisfies RegistryOperation;
const str = (name: string, value = 'v'): Cell => ({ name, type: 'str', value });

test('refusals name the node error: order, repeats, count, size, names, system cells, tombstones, flags, tags', () => {
  refused('AttributesNotSorted', () => encodeExecute([create([str('b'), str('a')])]));
  refused('AttributesNotSorted', () => encodeExecute([create([str('a'), str('a')])]));
  const many = Array.from({ length: 31 }, (_, i) => str(`a${String(i).padStart(2, '0')}`));
  refused('TooManyAttributes', () => encodeExecute([create(many)]));
  encodeExecute([create(many.slice(0, 30))]);
  refused('ValueTooLong', () => encodeExecute([create([str('a', 'x'.repeat(129))])]));
  encodeExecute([create([str('a', 'x'.repeat(128))])]);
  refused('Ident32InvalidByte', () => encodeExecute([create([str('entityType')])]));
  refused('Ident32InvalidByte', () => encodeExecute([create([str('_private')])]));
  refused('Ident32InvalidByte', () => encodeExecute([create([str('a'.repeat(33))])]));
  refused('Ident32Empty', () => encodeExecute([create([str('')])]));
  refused('ReservedName', () => encodeExecute([create([str('key')])]));
  refused('ReservedName', () => encodeExecute([create([str('a--b')])]));
  refused('SystemAttributeNotWritable', () => encodeExecute([create([{ name: '$owner', type: 'tombstone' }])]));
  refused('TombstoneInCreate', () => encodeExecute([create([{ name: 'gone', type: 'tombstone' }])]));
  refused('InvalidValueType', () =>
    encodeExecute([create([{ name: 'blob', type: 'bytes', value: new Uint8Array() }])]),
  );
  refused('ReservedCreationFlags', () => encodeExecute([create([], { creationFlags: 4 })]));
  refused('EmptyBatch', () => encodeExecute([]));
  refused('EmptyMutations', () => encodeExecute([{ op: 'patch', entityKey: `0x${'1'.repeat(64)}`, mutations: [] }]));
  refused('ValueOutOfRange', () => encodeCell({ name: 'a', type: 'i32', value: 2 ** 31 }));
  refused('ValueTooLong', () => encodeCell({ name: '$payload', type: 'bytes', value: new Uint8Array(131_073) }));
});

test('refusals on decode: non-canonical bytes, unknown tags, wrong selector, malformed values', () => {
  const input = tx('delete').input;
  refused('NotExecuteCalldata', () => decodeExecute(`0xba8ccf92${input.slice(10)}`));
  refused('NonCanonicalOperationData', () => decodeExecute(`${input}00`));
  const del = defined(decodeWireExecute(input)[0]);
  refused('InvalidOpType', () => decodeOperation({ operation: 6, operationData: del.operationData }));
  refused('NonCanonicalOperationData', () =>
    decodeOperation({ operation: 5, operationData: `${del.operationData}${'0'.repeat(64)}` }),
  );
  // The create vector with its attribute offset word moved (same values, another encoding).
  const createData = defined(decodeWireExecute(tx('create').input)[0]).operationData;
  refused('NonCanonicalOperationData', () =>
    decodeOperation({ operation: 1, operationData: `${createData}${'0'.repeat(64)}` }),
  );
  // Patches built with viem alone, so the values can break the rules the encoder enforces.
  const patchOf = (mutations: { name: Hex; typeId: number; value: Hex }[]) => ({
    operation: 2,
    operationData: encodeAbiParameters(OPERATION_STRUCTS.patch, [{ entityKey: `0x${'1'.repeat(64)}`, mutations }]),
  });
  const name = encodeName('rank');
  refused('InvalidValueType', () =>
    decodeOperation(patchOf([{ name, typeId: 2, value: `0x${'0'.repeat(56)}80000000` }])),
  );
  refused('InvalidValueType', () => decodeOperation(patchOf([{ name, typeId: 3, value: `0x${'1'.repeat(64)}` }])));
  refused('InvalidValueType', () => decodeOperation(patchOf([{ name, typeId: 11, value: '0x' }])));
  refused('InvalidValueType', () => decodeOperation(patchOf([{ name, typeId: 8, value: '0xff' }])));
  // An over-long str is ValueTooLong to our writer and InvalidValueType to the node (reported by helper B).
  try {
    decodeOperation(patchOf([{ name, typeId: 8, value: bytesToHex(new Uint8Array(129).fill(0x61)) }]));
    assert.fail('a 129-byte str decoded');
  } catch (error) {
    assert.ok(error instanceof DbChainCodecError && error.code === 'ValueTooLong');
    assert.deepEqual(error.revert, { name: 'InvalidValueType', args: [name, 8] });
  }
  refused('TombstoneValueNotEmpty', () => decodeOperation(patchOf([{ name, typeId: 0, value: '0x01' }])));
  refused('Ident32InvalidByte', () =>
    decodeOperation(
      patchOf([
        {
          name: concat([encodeName('ab').slice(0, 6) as Hex, '0x0041', `0x${'0'.repeat(56)}`]),
          typeId: 0,
          value: '0x',
        },
      ]),
    ),
  );
  refused('AttributesNotSorted', () =>
    decodeOperation(
      patchOf([
        { name: encodeName('b'), typeId: 0, value: '0x' },
        { name: encodeName('a'), typeId: 0, value: '0x' },
      ]),
    ),
  );
});

test("ExpiryOverflow is no custom error: Error(string) with the executor's text, its selector from the signature", () => {
  // arkiv-bindings/src/lib.rs @11b8f771 declares no ExpiryOverflow; revert.rs sends DecodeError::ExpiryOverflow
  // as Error(string) with decode.rs's display text "expiry overflow ({current} + {min_lifetime})".
  assert.ok(!errorAbi.some((item) => (item.name as string) === 'ExpiryOverflow'));
  const selector = keccak256(stringToBytes('Error(string)')).slice(0, 10);
  assert.equal(selector, '0x08c379a0');
  const reason = expiryOverflowReason(222498n, 2n ** 64n - 1n);
  assert.equal(reason, 'expiry overflow (222498 + 18446744073709551615)');
  const data = encodeRevertReason(reason);
  assert.equal(data.slice(0, 10), selector);
  assert.equal(decodeRevertReason(data), reason);
  assert.equal(decodeRegistryError(data), undefined, 'not one of the registry errors');
  assert.equal(explainRegistryRevert(data), reason);
  assert.equal(decodeRevertReason(encodeRegistryError({ name: 'EmptyBatch', args: [] })), undefined);
});

test("NotOwner and ExpiryNotExtended carry their arguments in the bindings' order", () => {
  const names = (name: string) =>
    (errorAbi.find((item) => item.name === name)?.inputs ?? []).map((input) => input.name);
  assert.deepEqual(names('NotOwner'), ['entityKey', 'caller', 'owner']);
  assert.deepEqual(names('ExpiryNotExtended'), ['entityKey', 'newExpiresAt', 'currentExpiresAt']);
});

test('custom errors encode as revert data and decode to a line naming them', () => {
  const data = encodeRegistryError({ name: 'Ident32InvalidByte', args: [6n, '0x45'] });
  assert.equal(data.slice(0, 10), '0x276f7798');
  const decoded = defined(decodeRegistryError(data));
  assert.equal(describeRegistryError(decoded), 'Ident32InvalidByte(6, 0x45)');
  const notOwner = encodeRegistryError({
    name: 'NotOwner',
    args: [
      `0x${'1'.repeat(64)}`,
      '0x000000000000000000000000000000000000dEaD',
      '0x0000000000000000000000000000000000000001',
    ],
  });
  assert.match(describeRegistryError(defined(decodeRegistryError(notOwner))), /^NotOwner\(0x1{64}, 0x0+dEaD, 0x0+1\)$/);
  assert.equal(decodeRegistryError('0x12345678'), undefined);
  // The codec's refusal carries the same revert the node gives.
  try {
    encodeExecute([create([str('b'), str('a')])]);
    assert.fail('unsorted accepted');
  } catch (error) {
    assert.ok(error instanceof DbChainCodecError && error.revert);
    assert.equal(encodeRegistryError(error.revert), '0x3206846a');
  }
});
