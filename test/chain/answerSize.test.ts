// Reads under the transport's answer size limit: a batch of blocks or a query page whose answer is over it
// is fetched again in smaller parts, and the result is the same as with no limit.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createArkivV1Source, createHttpTransport, type RpcTransport } from '../../src/chain/index.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import { startTestDevnet, walletClient } from '../helpers/devnet.ts';

describe('chain reads: answers over the size limit are split', () => {
  let devnet: Devnet;
  let roomy: RpcTransport;
  let tight: RpcTransport;
  before(async () => {
    devnet = await startTestDevnet();
    const alice = walletClient(devnet, 0);
    // Incompressible payloads: ~40 KB of hex per block and per entity.
    for (let i = 0; i < 6; i++)
      await alice.createEntity({
        payload: new Uint8Array(randomBytes(20_000)),
        contentType: 'application/octet-stream',
        attributes: [{ key: 'kind', value: 'big' }],
        expiresIn: 100_000,
      });
    roomy = createHttpTransport({ url: devnet.url });
    // One block or one entity fits; six do not.
    tight = createHttpTransport({ url: devnet.url, maxAnswerBytes: 64 * 1024 });
  });
  after(async () => {
    await roomy.close();
    await tight.close();
    await devnet.stop();
  });

  test('blocks and query pages come back whole and equal to an unlimited read', async () => {
    const head = devnet.headNumber;
    const [all, split] = [createArkivV1Source(roomy), createArkivV1Source(tight)];
    assert.deepEqual(await split.blocks(1, head), await all.blocks(1, head));
    const pages = async (source: typeof all) => {
      const keys: string[] = [];
      await source.forEachEntityPage({ strings: { kind: 'big' } }, head, (page) =>
        keys.push(...page.map((e) => `${e.key}:${e.value?.length}`)),
      );
      return keys;
    };
    const expected = await pages(all);
    assert.equal(expected.length, 6);
    assert.deepEqual(await pages(split), expected);
  });
});
