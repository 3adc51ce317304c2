// DB-chain devnet conformance, the read side: the typed query dialect, select / limit / bound cursors,
// arkiv_getEntity, arkiv_getEntityCount and arkiv_getBlockTiming with the number formats and error codes
// of arkiv-gen-d.md §4, and expiry: an entity is live until the block before its expiresAt, gone at it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { numberToHex, type Hex } from 'viem';
import { cursorBinding } from '../../src/devnet/dbchain/rpc.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import { body, cell, createEntity, dbchainClients } from '../helpers/dbchainDevnet.ts';
import { rpc, rpcResult, startTestDevnet } from '../helpers/devnet.ts';

type Page = { data: Record<string, unknown>[]; blockNumber: Hex; cursor?: string };

describe('DB-chain devnet: queries, number formats, expiry', () => {
  let devnet: Devnet;
  let alice: ReturnType<typeof dbchainClients>;
  let bob: ReturnType<typeof dbchainClients>;
  const keys: Record<string, Hex> = {};

  before(async () => {
    devnet = await startTestDevnet({ protocol: 'dbchain' });
    alice = dbchainClients(devnet, 0);
    bob = dbchainClients(devnet, 1);
    const make = async (name: string, who: typeof alice, ...user: ReturnType<typeof cell.str>[]) => {
      keys[name] = (await createEntity(devnet, who, { attributes: body(name, ...user), minLifetime: 10_000n })).key;
    };
    await make(
      'a',
      alice,
      cell.str('topic', "it's a"),
      cell.i32('rank', -5),
      cell.u64('size', 10n),
      cell.bool('hot', true),
    );
    await make(
      'b',
      alice,
      cell.str('topic', 'b side'),
      cell.i32('rank', 7),
      cell.dec('price', 3_500_000_000_000_000_000n),
    );
    await make('c', bob, cell.str('topic', 'it is c'), cell.u64('rank', 7n), cell.u256('big', 2n ** 200n));
  });
  after(() => devnet.stop());

  const query = (text: string, options: Record<string, unknown> = {}) =>
    rpcResult<Page>(devnet, 'arkiv_query', [text, { select: { key: true }, ...options }]);
  const matching = async (text: string) => (await query(text)).data.map((e) => e.key);
  const errorOf = async (method: string, params: unknown[]) => {
    const answer = await rpc(devnet, method, params);
    assert.ok(answer.error, `${method} ${JSON.stringify(params)} fails`);
    return answer.error as { code: number; message: string; data?: unknown };
  };

  test('typed predicates: exact type, ranges, NOT as the complement, STARTSWITH, system attributes; newest first', async () => {
    assert.deepEqual(await matching('*'), [keys.c, keys.b, keys.a]);
    assert.deepEqual(await matching("topic = str('it''s a')"), [keys.a]);
    assert.deepEqual(await matching('rank = 7'), [keys.b], 'a bare integer is an i32: the u64 rank does not match');
    assert.deepEqual(await matching('rank = u64(7)'), [keys.c]);
    assert.deepEqual(await matching('rank > i32(-6) AND rank < 0'), [keys.a]);
    assert.deepEqual(
      await matching('NOT (rank = 7)'),
      [keys.c, keys.a],
      'NOT includes entities lacking or mistyping it',
    );
    assert.deepEqual(await matching("topic STARTSWITH str('it')"), [keys.c, keys.a]);
    assert.deepEqual(await matching(`price >= dec(3.5) OR big = u256(0x1${'0'.repeat(50)})`), [keys.c, keys.b]);
    assert.deepEqual(await matching('hot = true'), [keys.a]);
    assert.deepEqual(await matching(`$owner = addr(${bob.account.address})`), [keys.c], 'EIP-55 checksummed');
    assert.deepEqual(await matching(`$owner = '${alice.account.address.toLowerCase()}'`), [keys.b, keys.a]);
    assert.deepEqual(await matching(`$key = key(${keys.b})`), [keys.b]);
    assert.deepEqual(await matching("$contentType = 'text/plain' AND size = u64(10) -- a comment"), [keys.a]);
    assert.deepEqual(await matching(`$expiresAt > u64(1) and $createdAt <= u64(${devnet.headNumber})`), [
      keys.c,
      keys.b,
      keys.a,
    ]);
  });

  test('query errors carry the node codes: syntax, type/operator, literal, limits, params, cursor, block', async () => {
    const code = async (text: string, options?: unknown) =>
      (await errorOf('arkiv_query', options === undefined ? [text] : [text, options])).code;
    assert.equal(await code('topic = '), -32001);
    assert.equal(await code('str = 1'), -32001, 'a type tag is not an attribute name');
    assert.equal(await code('* AND rank = 1'), -32001);
    assert.equal(await code('rank != 7'), -32002);
    assert.equal(await code('rank = 1 && hot = true'), -32002);
    assert.equal(await code('rank IN (1, 2)'), -32002);
    assert.equal(await code('$all'), -32002);
    assert.equal(await code('$updatedAt > u64(1)'), -32002);
    assert.equal(await code('$expiration > u64(1)'), -32002);
    assert.equal(await code('$expiresAt > 5'), -32002, '$expiresAt must be tagged u64');
    assert.equal(await code("topic > str('a')"), -32002, 'no range on str');
    assert.equal(await code("topic = 'bare'"), -32002);
    assert.equal(await code('rank = 2147483648'), -32003);
    assert.equal(await code('price = dec(1.0000000000000000001)'), -32003);
    assert.equal(await code(`topic = str('${'x'.repeat(129)}')`), -32003);
    const mixed = alice.account.address
      .replace(/[a-f]/, (c) => c.toUpperCase())
      .replace(/[A-F]/, (c) => c.toLowerCase());
    if (mixed !== alice.account.address)
      assert.equal(await code(`$owner = addr(${mixed})`), -32003, 'bad EIP-55 checksum');
    assert.equal(await code(Array.from({ length: 65 }, () => 'rank = 1').join(' OR ')), -32004);
    assert.equal(await code(`${'('.repeat(40)}rank = 1${')'.repeat(40)}`), -32004);
    assert.equal(await code(`${`topic = str('${'x'.repeat(100)}') OR `.repeat(90)}rank = 1`), -32004);
    assert.equal(await code('*', { resultsPerPage: '0x1' }), -32602, 'unknown option');
    assert.equal(await code('*', { limit: 0 }), -32602);
    assert.equal(await code('*', { limit: '0xc9' }), -32602);
    assert.equal(await code('*', { atBlock: 'earliest' }), -32602);
    assert.equal(await code('*', { atBlock: 5 }), -32602, 'atBlock is hex');
    assert.equal(await code('*', { select: { key: true, value: true } }), -32602);
    assert.equal(await code('*', { cursor: 'abc' }), -32005);
    const ahead = await errorOf('arkiv_query', ['*', { atBlock: numberToHex(devnet.headNumber + 5) }]);
    assert.equal(ahead.code, -32006);
    assert.deepEqual(Object.keys(ahead.data as object).sort(), ['latest', 'message', 'requested']);
    const syntax = await errorOf('arkiv_query', ['rank = = 1']);
    assert.equal(typeof (syntax.data as { position?: number }).position, 'number');
  });

  test('select, limit and cursors: absent fields stay absent, a cursor is bound to its query, block and select', async () => {
    const full = await rpcResult<Page>(devnet, 'arkiv_query', [
      `$key = key(${keys.b})`,
      {
        select: {
          key: true,
          owner: true,
          creator: true,
          createdAt: true,
          updatedAt: true,
          expiresAt: true,
          creationFlags: true,
          contentType: true,
          payload: true,
          attributeSchema: true,
          attributes: true,
        },
      },
    ]);
    const [b] = full.data;
    assert.ok(b);
    assert.match(full.blockNumber, /^0x[0-9a-f]+$/);
    assert.match(b.createdAt as string, /^0x[0-9a-f]+$/, 'createdAt is a hex quantity');
    assert.equal(b.expiresAt, numberToHex(BigInt(b.createdAt as string) + 10_000n));
    assert.deepEqual(b.creationFlags, { readonly: false, permissionlessExtension: false, raw: 0 });
    assert.equal(b.payload, '0x62');
    assert.deepEqual(b.attributeSchema, [
      { name: 'price', type: 'dec' },
      { name: 'rank', type: 'i32' },
      { name: 'topic', type: 'str' },
    ]);
    assert.deepEqual(b.attributes, [
      { name: 'price', type: 'dec', value: '3.5' },
      { name: 'rank', type: 'i32', value: 7 },
      { name: 'topic', type: 'str', value: 'b side' },
    ]);
    const [c] = (await query(`$key = key(${keys.c})`, { select: { attributes: { big: true } } })).data;
    assert.deepEqual(
      c,
      { attributes: [{ name: 'big', type: 'u256', value: numberToHex(2n ** 200n) }] },
      'no key unless selected',
    );
    const [bare] = (await rpcResult<Page>(devnet, 'arkiv_query', [`$key = key(${keys.a})`])).data;
    assert.deepEqual(bare, { key: keys.a }, 'no select: the key only');

    // Paging with limit 1 pinned to a block walks newest first; the last page has no cursor.
    const atBlock = numberToHex(devnet.headNumber);
    const walked: unknown[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 5; page++) {
      const answer = await query('*', { atBlock, limit: 1, ...(cursor ? { cursor } : {}) });
      walked.push(...answer.data.map((e) => e.key));
      cursor = answer.cursor;
      if (!cursor) break;
      assert.match(cursor, /^b64:[A-Za-z0-9_-]+$/);
    }
    assert.deepEqual(walked, [keys.c, keys.b, keys.a]);
    const first = await query('*', { atBlock, limit: '0x1' });
    assert.ok(first.cursor);
    for (const other of [
      { text: 'rank = 7', options: { atBlock, limit: 1 } },
      { text: '*', options: { atBlock: numberToHex(devnet.headNumber - 1), limit: 1 } },
      { text: '*', options: { atBlock, limit: 1, select: { key: true, owner: true } } },
    ]) {
      const refused = await errorOf('arkiv_query', [
        other.text,
        { select: { key: true }, ...other.options, cursor: first.cursor },
      ]);
      assert.equal(refused.code, -32005);
      assert.match(refused.message, /different query, block or select/);
    }
    // The reference's worked example (§4.3): `*`, block 4096, default select, id 5.
    const binding = cursorBinding('*', 4096, { fields: { key: true } as never, attributes: false });
    assert.equal(Buffer.from(binding).toString('hex'), 'a68f2c80dd2dd77e');
  });

  test('arkiv_getEntity and arkiv_getEntityCount take JSON-number blocks; arkiv_getBlockTiming answers numbers', async () => {
    const entity = await rpcResult<Record<string, unknown>>(devnet, 'arkiv_getEntity', [keys.a]);
    assert.equal(entity.key, keys.a);
    assert.equal(entity.payload, '0x61');
    assert.equal(entity.contentType, 'text/plain');
    assert.equal(entity.attributeSchema, undefined);
    assert.deepEqual((entity.attributes as unknown[]).length, 4);
    const createdAt = Number(BigInt(entity.createdAt as string));
    assert.equal(
      await rpcResult(devnet, 'arkiv_getEntity', [keys.a, createdAt - 1]),
      null,
      'not there before its create',
    );
    assert.equal(
      (await errorOf('arkiv_getEntity', [keys.a, numberToHex(createdAt)])).code,
      -32602,
      'a hex block fails',
    );
    assert.equal(await rpcResult(devnet, 'arkiv_getEntityCount', []), 3);
    assert.equal(await rpcResult(devnet, 'arkiv_getEntityCount', [{ query: 'rank = 7' }]), 1);
    assert.equal(await rpcResult(devnet, 'arkiv_getEntityCount', [{ block: createdAt }]), 1);
    assert.equal(
      await rpcResult(devnet, 'arkiv_getEntityCount', [{ filter: 'rank = 7' }]),
      3,
      'a filter key is ignored',
    );
    const timing = await rpcResult<Record<string, unknown>>(devnet, 'arkiv_getBlockTiming', []);
    assert.equal(timing.current_block, devnet.headNumber);
    assert.equal(typeof timing.current_block_time, 'number');
    assert.equal(typeof timing.duration, 'number');
  });

  test('expiry at the deadline: live through expiresAt - 1, gone from expiresAt on, in every read', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 4 }), async (lifetime) => {
        const { key, block } = await createEntity(devnet, alice, {
          attributes: body('brief'),
          minLifetime: BigInt(lifetime),
        });
        const deadline = Number(block) + lifetime;
        while (devnet.headNumber < deadline) devnet.mine();
        for (const [at, live] of [
          [deadline - 1, true],
          [deadline, false],
        ] as const) {
          const found = await matching(`$key = key(${key})`).then(() =>
            query(`$key = key(${key})`, { atBlock: numberToHex(at) }),
          );
          assert.equal(found.data.length, live ? 1 : 0, `arkiv_query at ${at}`);
          assert.equal(
            (await rpcResult(devnet, 'arkiv_getEntity', [key, at])) !== null,
            live,
            `arkiv_getEntity at ${at}`,
          );
          assert.equal(
            await rpcResult(devnet, 'arkiv_getEntityCount', [{ query: `$key = key(${key})`, block: at }]),
            live ? 1 : 0,
          );
        }
      }),
      { numRuns: 4 },
    );
  });
});
