// The devnet's --state file keeps every acknowledged block: a child `arkivector devnet --state` killed with
// SIGKILL right after an SDK receipt has that block (and its entity) after a restart, and block numbers are
// never reused for other content. A damaged or unusable state file is refused with a message, never
// overwritten.
import assert from 'node:assert/strict';
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { createPublicClient, createWalletClient, http } from '@arkiv-network/sdk';
import { privateKeyToAccount } from '@arkiv-network/sdk/accounts';
import { localhost } from '@arkiv-network/sdk/chains';

const DEV_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';

function startDevnetChild(state: string): {
  child: ChildProcessWithoutNullStreams;
  url: Promise<string>;
  output: () => string;
} {
  const child = spawn(process.execPath, [
    'bin/arkivector.js',
    'devnet',
    '--port',
    '0',
    '--block-time',
    '0',
    '--state',
    state,
  ]);
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const url = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no devnet within 90 s: ${output}`)), 90_000);
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Listening:\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`devnet exited with ${code}: ${output}`));
    });
  });
  return { child, url, output: () => output };
}

async function kill(child: ChildProcessWithoutNullStreams): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  process.kill(child.pid!, 'SIGKILL');
  await exited;
}

describe('devnet --state: durability', () => {
  test('SIGKILL right after a receipt: the block and its entity are there after a restart, numbers not reused', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'arkivector-state-'));
    const state = join(dir, 'devnet.json');
    try {
      const first = startDevnetChild(state);
      const url = await first.url;
      const wallet = createWalletClient({
        chain: localhost,
        transport: http(url),
        account: privateKeyToAccount(DEV_KEY),
      });
      const written: { key: string; block: bigint }[] = [];
      for (let i = 0; i < 3; i++) {
        const { entityKey, txHash } = await wallet.createEntity({
          payload: new TextEncoder().encode(`kept ${i}`),
          contentType: 'text/plain',
          attributes: [{ key: 'n', value: String(i) }],
          expiresIn: 100_000,
        });
        const receipt = await createPublicClient({ chain: localhost, transport: http(url) }).getTransactionReceipt({
          hash: txHash,
        });
        written.push({ key: entityKey, block: receipt.blockNumber });
      }
      const blockHash = await createPublicClient({ chain: localhost, transport: http(url) }).getBlock({
        blockNumber: written.at(-1)!.block,
      });
      await kill(first.child);

      const second = startDevnetChild(state);
      try {
        const url2 = await second.url;
        const reader = createPublicClient({ chain: localhost, transport: http(url2) });
        assert.ok((await reader.getBlockNumber({ cacheTime: 0 })) >= written.at(-1)!.block);
        for (const [i, { key }] of written.entries())
          assert.equal((await reader.getEntity(key as `0x${string}`)).toText(), `kept ${i}`);
        const again = await reader.getBlock({ blockNumber: written.at(-1)!.block });
        assert.equal(again.hash, blockHash.hash, 'the same block under the same number');
      } finally {
        await kill(second.child);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  for (const [what, content] of [
    ['blocks: null', JSON.stringify({ version: 1, chainId: 1337, genesisTimestamp: 1_700_000_000, blocks: null })],
    [
      'a damaged transaction',
      JSON.stringify({
        version: 1,
        chainId: 1337,
        genesisTimestamp: 1_700_000_000,
        blocks: [{ timestamp: 1_700_000_001, salt: 0, txs: ['0x02f8deadbeef'] }],
      }),
    ],
    ['not JSON', '{"version": 1, "chainId": 13'],
  ] as const)
    test(`a state file with ${what} is refused with a message and left as it was`, async () => {
      const dir = await mkdtemp(join(tmpdir(), 'arkivector-state-'));
      const state = join(dir, 'devnet.json');
      try {
        await writeFile(state, content);
        const node = startDevnetChild(state);
        await assert.rejects(node.url, /exited with 1/);
        assert.match(node.output(), /state file/);
        assert.doesNotMatch(node.output(), /is not a function/);
        assert.equal(await readFile(state, 'utf8'), content, 'the file is untouched');
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
});
