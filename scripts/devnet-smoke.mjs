// An independent check of a running devnet using only the unmodified @arkiv-network/sdk:
// create, query (with atBlock history), update, extend, and watch an entity expire.
// Usage: node scripts/devnet-smoke.mjs [RPC_URL]   (default http://127.0.0.1:8545; interval mining must be on)
import { createPublicClient, createWalletClient, http } from '@arkiv-network/sdk';
import { privateKeyToAccount } from '@arkiv-network/sdk/accounts';
import { localhost } from '@arkiv-network/sdk/chains';
import { eq } from '@arkiv-network/sdk/query';
import { ExpirationTime } from '@arkiv-network/sdk/utils';

const url = process.argv[2] ?? 'http://127.0.0.1:8545';
// Account 0 of the public test mnemonic; the devnet funds it.
const account = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80');
const wallet = createWalletClient({ chain: localhost, transport: http(url), account });
const reader = createPublicClient({ chain: localhost, transport: http(url) });
const text = (s) => new TextEncoder().encode(s);
const check = (ok, what) => {
  if (!ok) throw new Error(`failed: ${what}`);
  console.log(`ok - ${what}`);
};

const tag = `smoke${Date.now()}`;
const { entityKey, txHash } = await wallet.createEntity({
  payload: text('v1'),
  contentType: 'text/plain',
  attributes: [{ key: 'tag', value: tag }],
  expiresIn: ExpirationTime.fromBlocks(4),
});
const created = (await reader.getTransactionReceipt({ hash: txHash })).blockNumber;
check((await reader.getEntity(entityKey)).toText() === 'v1', 'create and getEntity');

const upd = await wallet.updateEntity({
  entityKey,
  payload: text('v2'),
  contentType: 'text/plain',
  attributes: [{ key: 'tag', value: tag }],
  expiresIn: ExpirationTime.fromBlocks(4),
});
const updated = (await reader.getTransactionReceipt({ hash: upd.txHash })).blockNumber;
const now = await reader.buildQuery().where(eq('tag', tag)).withPayload().fetch();
check(now.entities.length === 1 && now.entities[0].toText() === 'v2', 'update, then query at head');
const then = await reader.buildQuery().where(eq('tag', tag)).withPayload().validAtBlock(created).fetch();
check(
  then.entities.length === 1 && then.entities[0].toText() === 'v1',
  `query atBlock ${created} sees the first version`,
);

await wallet.extendEntity({ entityKey, expiresIn: ExpirationTime.fromBlocks(2) });
const expiresAt = (await reader.getEntity(entityKey)).expiresAtBlock;
check(expiresAt === updated + 6n, `extend adds 2 blocks (expires at ${expiresAt})`);

const expired = await new Promise((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error('no expiry event within 60 s')), 60_000);
  let unwatch = () => {};
  reader
    .subscribeEntityEvents(
      {
        onEntityExpired: (event) => {
          if (event.entityKey !== entityKey) return;
          clearTimeout(timer);
          unwatch();
          resolve(event);
        },
      },
      250,
      updated,
    )
    .then((stop) => (unwatch = stop));
});
check(expired.entityKey === entityKey, 'an Expired event arrives');
const after = await reader.buildQuery().where(eq('tag', tag)).fetch();
check(after.entities.length === 0, `the entity is gone at block ${expiresAt}`);
