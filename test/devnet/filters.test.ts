// The devnet's polling filters over real JSON-RPC (src/devnet/logs.ts): a block filter gives each new
// block's hash once, a log filter its Arkiv logs once, a forced reorg reports the logs it took back as
// removed, eth_getFilterLogs re-reads without consuming, and an uninstalled or unknown filter is refused.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ARKIV_ADDRESS } from '../../src/chain/v1/index.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import { rpc, rpcResult, startTestDevnet, text, walletClient } from '../helpers/devnet.ts';

interface Log {
  blockNumber: string;
  removed: boolean;
}

let devnet: Devnet;
before(async () => (devnet = await startTestDevnet()));
after(() => devnet.stop());

test('block and log filters: each change once, removed logs after a reorg, then the replacement chain', async () => {
  const blocks = await rpcResult<string>(devnet, 'eth_newBlockFilter');
  const logs = await rpcResult<string>(devnet, 'eth_newFilter', [{ address: ARKIV_ADDRESS }]);
  const { txHash } = await walletClient(devnet).createEntity({
    payload: text('filtered'),
    contentType: 'text/plain',
    attributes: [],
    expiresIn: 3600,
  });
  const receipt = await rpcResult<{ blockNumber: string; blockHash: string }>(devnet, 'eth_getTransactionReceipt', [
    txHash,
  ]);
  const hashes = await rpcResult<string[]>(devnet, 'eth_getFilterChanges', [blocks]);
  assert.ok(hashes.includes(receipt.blockHash), "the block filter gives the write's block");
  assert.deepEqual(await rpcResult(devnet, 'eth_getFilterChanges', [blocks]), [], 'and only once');
  const first = await rpcResult<Log[]>(devnet, 'eth_getFilterChanges', [logs]);
  assert.ok(first.length > 0 && first.every((log) => !log.removed && log.blockNumber === receipt.blockNumber));
  assert.deepEqual(await rpcResult(devnet, 'eth_getFilterChanges', [logs]), []);

  devnet.reorg(devnet.headNumber - Number(receipt.blockNumber) + 1);
  const after = await rpcResult<Log[]>(devnet, 'eth_getFilterChanges', [logs]);
  assert.deepEqual(
    after.filter((log) => log.removed).map((log) => log.blockNumber),
    first.map((log) => log.blockNumber),
    'the reorg reports the logs it took back as removed',
  );
  assert.ok((await rpcResult<string[]>(devnet, 'eth_getFilterLogs', [blocks])).length > 0);
  assert.ok((await rpcResult<string[]>(devnet, 'eth_getFilterLogs', [blocks])).length > 0, 'not consumed');

  assert.equal(await rpcResult(devnet, 'eth_uninstallFilter', [logs]), true);
  assert.equal((await rpc(devnet, 'eth_getFilterChanges', [logs])).error?.message, 'filter not found');
});
