// Heap the embedded DB-chain devnet holds per write of ~1.5 KB of payload (blocks, transactions, receipts, the
// entity state), after GC: `N=300 node --expose-gc --import tsx scripts/measure-devnet-write-memory.ts`.
import { randomBytes } from 'node:crypto';
import { startTestDevnet } from '../test/helpers/devnet.ts';
import { body, cell, createEntity, dbchainClients } from '../test/helpers/dbchainDevnet.ts';

const N = Number(process.env.N ?? 300);
const devnet = await startTestDevnet({ protocol: 'dbchain' });
const alice = dbchainClients(devnet, 0);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');
const heap = () => {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
};
await createEntity(devnet, alice, { attributes: body('warm', cell.str('kind', 'm')), minLifetime: 100_000n });
const before = heap();
for (let i = 0; i < N; i++)
  await createEntity(devnet, alice, {
    attributes: body(randomBytes(750).toString('hex'), cell.str('kind', 'm')),
    minLifetime: 100_000n,
  });
const after = heap();
console.log(JSON.stringify({ writes: N, bytes_per_write: Math.round((after - before) / N) }));
await devnet.stop();
