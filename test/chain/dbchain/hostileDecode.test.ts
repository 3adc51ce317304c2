// The DB-chain decoders against hostile chain data: arbitrary and mutated-valid calldata and logs. What the
// chain (or a hostile RPC) sends may be refused, never crash the node, never cost more than linear work,
// and never change what another transaction of the block decodes to (a refusal fails the whole read instead).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { bytesToHex, type Address, type Hex } from 'viem';
import { decodeRegistryTransactions } from '../../../src/chain/dbchain/blockOps.ts';
import { ChainDataError } from '../../../src/chain/source.ts';
import { RegistryEventError, decodeRegistryEvent } from '../../../src/chain/dbchain/events.ts';
import {
  DbChainCodecError,
  REGISTRY_ADDRESS,
  SELECTORS,
  createCells,
  decodeExecute,
  encodeExecute,
  encodeRegistryEvent,
  type Cell,
  type RegistryEvent,
  type RegistryOperation,
} from '../../../src/chain/dbchain/index.ts';
import type { LoggedTransaction, RegistryLog } from '../../../src/chain/dbchain/reads.ts';

const hex32 = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => bytesToHex(b));
const address = fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => bytesToHex(b) as Address);
const RESERVED = new Set(
  'and or not true false startswith exists typeof bool i32 u64 u256 dec bytes32 bytes str addr key'.split(' '),
);
const name = fc.stringMatching(/^[a-z][a-z0-9._]{0,8}$/).filter((n) => !RESERVED.has(n));
const userCell: fc.Arbitrary<Cell> = fc.oneof(
  fc.record({ name, type: fc.constant('str' as const), value: fc.string({ maxLength: 20 }) }),
  fc.record({ name, type: fc.constant('u64' as const), value: fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }) }),
  fc.record({ name, type: fc.constant('i32' as const), value: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }) }),
  fc.record({ name, type: fc.constant('bool' as const), value: fc.boolean() }),
);
const byName = (a: Cell, b: Cell) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
const cells = fc.uniqueArray(userCell, { selector: (c) => c.name, maxLength: 5 }).map((l) => l.sort(byName));
const operation: fc.Arbitrary<RegistryOperation> = fc.oneof(
  fc
    .record({
      salt: fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }),
      payload: fc.uint8Array({ maxLength: 40 }),
      attributes: cells,
      flags: fc.integer({ min: 0, max: 3 }),
    })
    .map(({ salt, payload, attributes, flags }) => ({
      op: 'create' as const,
      salt,
      expiresAt: 0n,
      minLifetime: 100n,
      creationFlags: flags,
      attributes: createCells({ payload, contentType: 'text/plain', attributes }).sort(byName),
    })),
  fc
    .record({ entityKey: hex32, mutations: cells.filter((l) => l.length > 0) })
    .map((r) => ({ op: 'patch' as const, ...r })),
  fc.record({ entityKey: hex32 }).map((r) => ({ op: 'extend' as const, ...r, expiresAt: 500n, minLifetime: 0n })),
  fc.record({ entityKey: hex32, newOwner: address }).map((r) => ({ op: 'transfer' as const, ...r })),
  fc.record({ entityKey: hex32 }).map((r) => ({ op: 'delete' as const, ...r })),
);
const batch = fc.array(operation, { minLength: 1, maxLength: 4 });

/** Each way hostile bytes differ from valid ones: flipped bytes, rewritten words, cut or grown data. */
const HOSTILE_WORDS = [0n, 1n, 32n, 64n, (1n << 32n) - 1n, 1n << 48n, (1n << 256n) - 1n];
function mutate(input: Hex, edits: readonly [number, number, number][]): Hex {
  let body = input.slice(10);
  for (const [kind, at, value] of edits) {
    const words = Math.max(1, Math.floor(body.length / 64));
    if (kind === 0 && body.length > 0) {
      const i = (at % (body.length / 2)) * 2;
      body = `${body.slice(0, i)}${(value % 256).toString(16).padStart(2, '0')}${body.slice(i + 2)}`;
    } else if (kind === 1) {
      const i = (at % words) * 64;
      const word = (HOSTILE_WORDS[value % HOSTILE_WORDS.length] as bigint).toString(16).padStart(64, '0');
      body = `${body.slice(0, i)}${word}${body.slice(i + 64)}`;
    } else if (kind === 2) body = body.slice(0, (at % (body.length / 2 + 1)) * 2);
    else body = `${body}${'00'.repeat(1 + (value % 40))}`;
  }
  return `${SELECTORS.execute}${body}` as Hex;
}
const edits = fc.array(fc.tuple(fc.nat(3), fc.nat(), fc.nat()), { minLength: 1, maxLength: 4 });

/** Decodes, or refuses with the codec's own error: anything else (a TypeError, a RangeError) is a crash. */
function decodeOrRefuse(input: Hex): RegistryOperation[] | undefined {
  try {
    return decodeExecute(input);
  } catch (error) {
    if (!(error instanceof DbChainCodecError)) throw error;
    return undefined;
  }
}

test('arbitrary calldata after the selector decodes or is refused with DbChainCodecError', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 600 }), (body) => {
      decodeOrRefuse(`${SELECTORS.execute}${bytesToHex(body).slice(2)}`);
    }),
    { numRuns: 400 },
  );
});

test('mutated valid calldata decodes only to what re-encodes to the same bytes, else is refused', () => {
  fc.assert(
    fc.property(batch, edits, (ops, changes) => {
      const hostile = mutate(encodeExecute(ops), changes);
      const decoded = decodeOrRefuse(hostile);
      // Strict decode: whatever passes is the canonical encoding of what it decoded to.
      if (decoded) assert.equal(encodeExecute(decoded, false), hostile.toLowerCase());
    }),
    { numRuns: 400 },
  );
});

test('calldata that is not hex at all is refused, not thrown', () => {
  for (const input of [
    '0x',
    '0x4965',
    `${SELECTORS.execute}zz`,
    `${SELECTORS.execute}0`,
    `${SELECTORS.execute}${'g'.repeat(64)}`,
  ])
    decodeOrRefuse(input as Hex);
});

test('heads that all point at one large tail are refused before they are decoded (linear work)', () => {
  // Before the layout check viem followed every offset: 2 MB took 13 s and 2.2 GB, 8 MB ran out of memory.
  const length = 512 * 1024;
  const count = length / 32;
  const w = (n: number) => n.toString(16).padStart(64, '0');
  const heads = w(count * 32).repeat(count);
  const input =
    `${SELECTORS.execute}${w(0x20)}${w(count)}${heads}${w(1)}${w(0x40)}${w(length)}${'ab'.repeat(length)}` as Hex;
  const before = process.cpuUsage();
  let code: string | undefined;
  try {
    decodeExecute(input);
  } catch (error) {
    code = (error as DbChainCodecError).code;
  }
  const cpuMs = (process.cpuUsage(before).user + process.cpuUsage(before).system) / 1000;
  assert.equal(code, 'NonCanonicalOperationData');
  assert.ok(cpuMs < 1500, `refusing 1 MB of shared-tail calldata took ${cpuMs.toFixed(0)} ms of CPU`);
});

// ---- blocks: calldata zipped with logs ----

const SENDER = '0x00000000000000000000000000000000000000a1' as Address;
function eventsFor(ops: readonly RegistryOperation[], keys: readonly Hex[]): RegistryEvent[] {
  return ops.map((op, i): RegistryEvent => {
    switch (op.op) {
      case 'create':
        return {
          event: 'created',
          entityKey: keys[i] as Hex,
          owner: SENDER,
          expiresAt: 900n,
          creationFlags: op.creationFlags,
        };
      case 'patch':
        return { event: 'patched', entityKey: op.entityKey, owner: SENDER };
      case 'extend':
        return { event: 'extended', entityKey: op.entityKey, owner: SENDER, expiresAt: 500n };
      case 'transfer':
        return { event: 'transferred', entityKey: op.entityKey, previousOwner: SENDER, newOwner: op.newOwner };
      default:
        return { event: 'deleted', entityKey: op.entityKey, owner: SENDER };
    }
  });
}
function txWithLogs(index: number, ops: readonly RegistryOperation[], keys: readonly Hex[]) {
  const hash = `0x${(index + 1).toString(16).padStart(64, '0')}` as Hex;
  const tx: LoggedTransaction = { hash, index, from: SENDER, to: REGISTRY_ADDRESS, input: encodeExecute(ops) };
  const logs: RegistryLog[] = eventsFor(ops, keys).map((e, i) => ({
    ...encodeRegistryEvent(e),
    blockNumber: 10,
    blockHash: `0x${'b'.repeat(64)}`,
    transactionHash: hash,
    transactionIndex: index,
    logIndex: i,
  }));
  return { tx, logs };
}

/** Hostile log edits: drop, duplicate, swap, rewrite a topic, rewrite the data (also as non-hex). */
const logEdit = fc.tuple(
  fc.nat(5),
  fc.nat(),
  fc.oneof(
    hex32,
    fc.constantFrom('0x', '0xzz', '0x1', `0x${'f'.repeat(130)}`, `0x${'z'.repeat(64)}`, `0x${'z'.repeat(128)}`),
  ),
);
function hostileLogs(logs: RegistryLog[], changes: readonly [number, number, string][]): RegistryLog[] {
  const out = logs.map((l) => ({ ...l, topics: [...l.topics] }));
  for (const [kind, at, value] of changes) {
    if (out.length === 0) break;
    const i = at % out.length;
    const log = out[i] as RegistryLog;
    if (kind === 0) out.splice(i, 1);
    else if (kind === 1) out.splice(i, 0, { ...log });
    else if (kind === 2) out.reverse();
    else if (kind === 3) log.topics[at % (log.topics.length + 1)] = value as Hex;
    else if (kind === 4) log.data = value as Hex;
    else log.topics = log.topics.slice(0, at % 4);
  }
  return out;
}

test('hostile logs or calldata in one transaction fail the whole read (ChainDataError), or decode unchanged', () => {
  fc.assert(
    fc.property(
      batch,
      fc.array(hex32, { minLength: 4, maxLength: 4 }),
      batch,
      fc.array(logEdit, { minLength: 1, maxLength: 3 }),
      edits,
      fc.boolean(),
      (goodOps, keys, badOps, logChanges, callChanges, mutateCall) => {
        const good = txWithLogs(1, goodOps, keys);
        const bad = txWithLogs(
          0,
          badOps,
          keys.map((k) => `${k.slice(0, 65)}0` as Hex),
        );
        const badTx = mutateCall ? { ...bad.tx, input: mutate(bad.tx.input, callChanges) } : bad.tx;
        const alone = decodeRegistryTransactions(10, [good.tx], good.logs);
        assert.deepEqual(alone.anomalies, []);
        let mixed: ReturnType<typeof decodeRegistryTransactions>;
        try {
          mixed = decodeRegistryTransactions(
            10,
            [badTx, good.tx],
            [...hostileLogs(bad.logs, logChanges), ...good.logs],
          );
        } catch (error) {
          // The chain logs only what decodes: a mismatch is the RPC's wrong answer, retried, never skipped.
          assert.ok(error instanceof ChainDataError, String(error));
          return;
        }
        // Its edits cancelled out: the block decodes whole, the good transaction unchanged.
        assert.deepEqual(mixed.anomalies, []);
        assert.deepEqual(
          mixed.ops.filter((op) => 'txIndex' in op && op.txIndex === 1),
          alone.ops,
        );
      },
    ),
    { numRuns: 300 },
  );
});

test('a uintN field with bits above N is NonCanonicalOperationData, not viem IntegerOutOfRangeError', () => {
  const key = `0x${'0'.repeat(64)}` as Hex;
  const input = encodeExecute([{ op: 'extend', entityKey: key, expiresAt: 500n, minLifetime: 0n }]);
  const word = (n: number) => n.toString(16).padStart(64, '0');
  // The extend's expiresAt word (after its entity key) gets its top bit, as does the outer uint8 tag.
  const expiresAt = input.indexOf(word(500));
  const highExpiry = `${input.slice(0, expiresAt)}8${input.slice(expiresAt + 1)}` as Hex;
  const tag = input.indexOf(word(3));
  const highTag = `${input.slice(0, tag)}8${input.slice(tag + 1)}` as Hex;
  assert.throws(
    () => decodeExecute(highExpiry),
    (e: unknown) => e instanceof DbChainCodecError && e.code === 'NonCanonicalOperationData',
  );
  // viem refuses the outer tag itself (not a safe integer): still the codec's own error.
  assert.throws(() => decodeExecute(highTag), DbChainCodecError);
});

test('a registry log whose data words are not hex is a RegistryEventError, not a SyntaxError', () => {
  const log = encodeRegistryEvent({
    event: 'extended',
    entityKey: `0x${'1'.repeat(64)}`,
    owner: SENDER,
    expiresAt: 5n,
  });
  assert.throws(() => decodeRegistryEvent({ ...log, data: `0x${'z'.repeat(64)}` }), RegistryEventError);
});
