// Devnet conformance: arkiv_query through the SDK's query(), buildQuery() and getEntity(): every operator,
// the literal-type rule, meta attributes, includeData, pagination over 200, historical atBlock, counts.
import assert from 'node:assert/strict';
import { type EventEmitter, once } from 'node:events';
import { after, before, describe, test } from 'node:test';
import type { Hex } from '@arkiv-network/sdk';
import { and, eq, gt, gte, lt, lte, neq, not, or } from '@arkiv-network/sdk/query';
import type { Devnet } from '../../src/devnet/index.ts';
import { lower, publicClient, rpc, rpcResult, startTestDevnet, text, walletClient } from '../helpers/devnet.ts';
import { defined } from '../helpers/defined.ts';

describe('devnet: arkiv_query', () => {
  let devnet: Devnet;
  let reader: ReturnType<typeof publicClient>;
  let alice: ReturnType<typeof walletClient>;
  let bob: ReturnType<typeof walletClient>;
  /** name -> key of the seeded entities */
  const keys = new Map<string, Hex>();

  const seed = [
    {
      name: 'cat',
      writer: 0,
      attrs: [
        { key: 'kind', value: 'pet' },
        { key: 'legs', value: 4 },
        { key: 'path', value: 'a/b' },
      ],
    },
    {
      name: 'dog',
      writer: 0,
      attrs: [
        { key: 'kind', value: 'pet' },
        { key: 'legs', value: 4 },
        { key: 'path', value: 'a/c' },
      ],
    },
    {
      name: 'bird',
      writer: 1,
      attrs: [
        { key: 'kind', value: 'wild' },
        { key: 'legs', value: 2 },
        { key: 'path', value: 'a/b/c' },
      ],
    },
    {
      name: 'snake',
      writer: 1,
      attrs: [
        { key: 'kind', value: 'wild' },
        { key: 'legs', value: 0 },
      ],
    },
    { name: 'rock', writer: 0, attrs: [{ key: 'legs', value: '4' }] },
  ];

  before(async () => {
    devnet = await startTestDevnet();
    reader = publicClient(devnet);
    alice = walletClient(devnet, 0);
    bob = walletClient(devnet, 1);
    const result = await alice.mutateEntities({
      creates: seed
        .filter((s) => s.writer === 0)
        .map((s) => ({
          payload: text(s.name),
          contentType: 'text/plain',
          attributes: [{ key: 'name', value: s.name }, ...s.attrs],
          expiresIn: 3600,
        })),
    });
    seed
      .filter((s) => s.writer === 0)
      .forEach((s, i) => {
        keys.set(s.name, defined(result.createdEntities[i], 'result.createdEntities[i]'));
      });
    const other = await bob.mutateEntities({
      creates: seed
        .filter((s) => s.writer === 1)
        .map((s) => ({
          payload: text(s.name),
          contentType: 'text/plain',
          attributes: [{ key: 'name', value: s.name }, ...s.attrs],
          expiresIn: 3600,
        })),
    });
    seed
      .filter((s) => s.writer === 1)
      .forEach((s, i) => {
        keys.set(s.name, defined(other.createdEntities[i], 'other.createdEntities[i]'));
      });
  });
  after(() => devnet.stop());

  const names = async (query: string) => {
    const { entities } = await reader.query(query, { includeData: { attributes: true, payload: true } });
    return entities.map((e) => e.toText()).sort();
  };

  test('operators: = and != on strings; != skips entities without the attribute', async () => {
    assert.deepEqual(await names('kind = "pet"'), ['cat', 'dog']);
    assert.deepEqual(await names('kind != "pet"'), ['bird', 'snake']);
    assert.deepEqual(await names('!(kind = "pet")'), ['bird', 'snake']);
  });

  test('operators: < <= > >= on numbers', async () => {
    assert.deepEqual(await names('legs < 4'), ['bird', 'snake']);
    assert.deepEqual(await names('legs <= 2'), ['bird', 'snake']);
    assert.deepEqual(await names('legs > 2'), ['cat', 'dog']);
    assert.deepEqual(await names('legs >= 0'), ['bird', 'cat', 'dog', 'snake']);
  });

  test('literal type picks the index: a string literal never matches a numeric attribute', async () => {
    assert.deepEqual(await names('legs = "4"'), ['rock']);
    assert.deepEqual(await names('legs = 4'), ['cat', 'dog']);
  });

  test('operators: string ordering is bytewise', async () => {
    assert.deepEqual(await names('name < "d"'), ['bird', 'cat']);
    assert.deepEqual(await names('name >= "rock"'), ['rock', 'snake']);
  });

  test('operators: glob follows Go path.Match (* does not cross /)', async () => {
    assert.deepEqual(await names('path ~ "a/*"'), ['cat', 'dog']);
    assert.deepEqual(await names('path ~ "a/?/*"'), ['bird']);
    assert.deepEqual(await names('path !~ "a/b"'), ['bird', 'dog']);
    assert.deepEqual(await names('name glob "[bc]*"'), ['bird', 'cat']);
    // The node's one-token lookahead commits to NOT IN after `name NOT`, so NOT GLOB never parses there.
    await assert.rejects(names('name NOT GLOB "*o*"'), /unexpected token "GLOB"/);
  });

  test('operators: IN and NOT IN lists, space separated', async () => {
    assert.deepEqual(await names('name IN ("cat" "snake" "nope")'), ['cat', 'snake']);
    assert.deepEqual(await names('legs in (0 2)'), ['bird', 'snake']);
    assert.deepEqual(await names('legs NOT IN (4)'), ['bird', 'snake']);
  });

  test('boolean structure: && binds tighter than ||, parentheses, keywords', async () => {
    assert.deepEqual(await names('kind = "wild" && legs = 0 || name = "cat"'), ['cat', 'snake']);
    assert.deepEqual(await names('kind = "wild" AND (legs = 0 OR legs = 2)'), ['bird', 'snake']);
    assert.deepEqual(await names('NOT (legs >= 2 and kind = "pet")'), ['bird', 'snake']);
  });

  test('meta attributes: $owner and $creator (any case), $key, $all', async () => {
    assert.deepEqual(await names(`$owner = ${bob.account.address}`), ['bird', 'snake']);
    assert.deepEqual(await names(`$creator = "${bob.account.address.toUpperCase().replace('0X', '0x')}"`), [
      'bird',
      'snake',
    ]);
    assert.deepEqual(await names(`$key = ${keys.get('dog')}`), ['dog']);
    assert.deepEqual(await names(`$owner IN (${alice.account.address} ${bob.account.address}) && legs = 0`), ['snake']);
    assert.equal((await names('$all')).length, 5);
    assert.equal((await names('*')).length, 5);
  });

  test('buildQuery: the SDK builder with eq/neq/gt/gte/lt/lte/and/or and ownedBy', async () => {
    const fetchNames = async (
      build: (q: ReturnType<typeof reader.buildQuery>) => ReturnType<typeof reader.buildQuery>,
    ) => {
      const result = await build(reader.buildQuery()).withPayload().fetch();
      return result.entities.map((e) => e.toText()).sort();
    };
    assert.deepEqual(await fetchNames((q) => q.where(eq('kind', 'pet'))), ['cat', 'dog']);
    assert.deepEqual(await fetchNames((q) => q.where([neq('kind', 'pet'), gt('legs', 0)])), ['bird']);
    assert.deepEqual(
      await fetchNames((q) => q.where(or([lt('legs', 1), gte('legs', 4)])).ownedBy(bob.account.address)),
      ['snake'],
    );
    assert.deepEqual(
      await fetchNames((q) => q.where(and([lte('legs', 4), eq('kind', 'pet')])).createdBy(alice.account.address)),
      ['cat', 'dog'],
    );
  });

  test('SDK bug (reference §4.3): not("k") produces "!k", which the node grammar rejects', async () => {
    await assert.rejects(reader.buildQuery().where(not('kind')).fetch(), /unexpected/);
  });

  test('errors: empty query, !name, meta attribute with <, and short hex are parse errors (-32000)', async () => {
    for (const bad of ['', '!kind', '$expiration > 1', 'x = 0x123', 'name IN ("a", "b")']) {
      const answer = await rpc(devnet, 'arkiv_query', [bad, {}]);
      assert.equal(answer.error?.code, -32000, bad);
      assert.match(answer.error!.message, /^error executing query: error parsing query: /, bad);
    }
  });

  test('includeData: omitted means the default fields; present means only the flags set', async () => {
    const key = keys.get('cat')!;
    const full = await rpcResult<{ data: Record<string, unknown>[] }>(devnet, 'arkiv_query', [`$key = ${key}`, null]);
    assert.deepEqual(Object.keys(defined(full.data[0], 'the first entity')).sort(), [
      'contentType',
      'creator',
      'expiresAt',
      'key',
      'numericAttributes',
      'owner',
      'stringAttributes',
      'value',
    ]);
    assert.equal(typeof defined(full.data[0], 'full.data[0]').expiresAt, 'number');
    assert.deepEqual(defined(full.data[0], 'full.data[0]').stringAttributes, [
      { key: 'kind', value: 'pet' },
      { key: 'name', value: 'cat' },
      { key: 'path', value: 'a/b' },
    ]);
    const some = await rpcResult<{ data: Record<string, unknown>[] }>(devnet, 'arkiv_query', [
      `$key = ${key}`,
      { includeData: { key: true, owner: true } },
    ]);
    assert.deepEqual(some.data[0], { key, owner: lower(alice.account.address) });
  });

  test('getEntityCount and getBlockTiming', async () => {
    assert.equal(await reader.getEntityCount(), 5);
    const timing = await reader.getBlockTiming();
    assert.equal(timing.currentBlock, await reader.getBlockNumber({ cacheTime: 0 }));
    assert.ok(timing.blockDuration > 0);
    assert.ok(timing.currentBlockTime > 1_700_000_000);
  });
});

describe('devnet: arkiv_query pagination and history', () => {
  let devnet: Devnet;
  let reader: ReturnType<typeof publicClient>;
  let alice: ReturnType<typeof walletClient>;

  before(async () => {
    devnet = await startTestDevnet();
    reader = publicClient(devnet);
    alice = walletClient(devnet, 0);
  });
  after(() => devnet.stop());

  test('pagination: 450 entities come back over pages of 200 with cursors, newest first, no duplicates', async () => {
    const creates = Array.from({ length: 450 }, (_, i) => ({
      payload: text(`item-${i}`),
      contentType: 'text/plain',
      attributes: [
        { key: 'batch', value: 'p' },
        { key: 'i', value: i },
      ],
      expiresIn: 3600,
    }));
    const { createdEntities } = await alice.mutateEntities({ creates });
    const first = await reader.buildQuery().where(eq('batch', 'p')).withAttributes().limit(200).fetch();
    assert.equal(first.entities.length, 200);
    assert.equal(first.hasNextPage(), true);
    const seen = first.entities.map((e) => e.key);
    while (first.hasNextPage()) {
      await first.next();
      seen.push(...first.entities.map((e) => e.key));
    }
    assert.equal(seen.length, 450);
    assert.equal(new Set(seen).size, 450);
    assert.deepEqual([...seen].sort(), [...createdEntities].map((k) => k.toLowerCase()).sort());
    // Descending row id: the last create of the transaction comes first.
    assert.equal(seen[0], defined(createdEntities[449], 'createdEntities[449]').toLowerCase());
  });

  test('pagination: resultsPerPage is capped at 200 and a full last page still carries a cursor', async () => {
    const page = await rpcResult<{ data: unknown[]; cursor?: string }>(devnet, 'arkiv_query', [
      'batch = "p"',
      { resultsPerPage: '0x3e8', includeData: { key: true } },
    ]);
    assert.equal(page.data.length, 200);
    const exact = await rpcResult<{ data: unknown[]; cursor?: string }>(devnet, 'arkiv_query', [
      'i < 10',
      { resultsPerPage: 10, includeData: { key: true } },
    ]);
    assert.equal(exact.data.length, 10);
    assert.ok(exact.cursor);
    const rest = await rpcResult<{ data: unknown[]; cursor?: string }>(devnet, 'arkiv_query', [
      'i < 10',
      { resultsPerPage: 10, cursor: exact.cursor, includeData: { key: true } },
    ]);
    assert.deepEqual(rest.data, []);
    assert.equal(rest.cursor, undefined);
    const zero = await rpc(devnet, 'arkiv_query', ['i < 10', { resultsPerPage: '0x0' }]);
    assert.equal(zero.error?.code, -32602);
  });

  test('atBlock: answers as of that block across update, extend and delete', async () => {
    const { entityKey: key, txHash } = await alice.createEntity({
      payload: text('v1'),
      contentType: 'text/plain',
      attributes: [{ key: 'h', value: 'x' }],
      expiresIn: 3600,
    });
    const created = (await reader.getTransactionReceipt({ hash: txHash })).blockNumber;
    const updated = (
      await reader.getTransactionReceipt({
        hash: (
          await alice.updateEntity({
            entityKey: key,
            payload: text('v2'),
            contentType: 'text/plain',
            attributes: [{ key: 'h', value: 'y' }],
            expiresIn: 3600,
          })
        ).txHash,
      })
    ).blockNumber;
    const deleted = (
      await reader.getTransactionReceipt({ hash: (await alice.deleteEntity({ entityKey: key })).txHash })
    ).blockNumber;
    const at = async (block: bigint) => {
      const result = await reader.buildQuery().where(eq('h', 'x')).validAtBlock(block).withPayload().fetch();
      const result2 = await reader.buildQuery().where(eq('h', 'y')).validAtBlock(block).withPayload().fetch();
      return [...result.entities, ...result2.entities].map((e) => e.toText());
    };
    assert.deepEqual(await at(created - 1n), []);
    assert.deepEqual(await at(created), ['v1']);
    assert.deepEqual(await at(updated - 1n), ['v1']);
    assert.deepEqual(await at(updated), ['v2']);
    assert.deepEqual(await at(deleted - 1n), ['v2']);
    assert.deepEqual(await at(deleted), []);
    const page = await reader.query('h = "x"', { atBlock: created });
    assert.equal(page.blockNumber, created);
  });

  test('atBlock: a block beyond the head is waited for, then refused', async () => {
    const head = await reader.getBlockNumber({ cacheTime: 0 });
    const answer = await rpc(devnet, 'arkiv_query', ['$all', { atBlock: `0x${(head + 100n).toString(16)}` }]);
    assert.equal(answer.error?.code, -32000);
    assert.match(answer.error!.message, /not available yet/);
    // The query registers a block listener while it waits; mine only once it does.
    const waiting = once(devnet.node as EventEmitter, 'newListener');
    const pending = rpcResult<{ blockNumber: string }>(devnet, 'arkiv_query', [
      '$all',
      { atBlock: `0x${(head + 1n).toString(16)}`, includeData: { key: true } },
    ]);
    await waiting;
    assert.equal(BigInt(await reader.getBlockNumber({ cacheTime: 0 })), head);
    devnet.mine();
    assert.equal(BigInt((await pending).blockNumber), head + 1n);
  });
});
