// Where the registry transactions of a read are decoded: on the calling thread while their calldata is
// small, in a worker thread of its own beyond DECODE_INLINE_MAX_BYTES, so large calldata (ABI decoding, a
// keccak over each transaction past a bound) never holds the thread that serves searches.
import { Worker } from 'node:worker_threads';
import type { Hex } from 'viem';
import { siblingModule, workerEntry } from '../../workerEntry.ts';
import type { LoggedTransaction } from './reads.ts';
import { txVerdict, type TxVerdict } from './txBounds.ts';

/** Calldata bytes of one read decoded on the calling thread; more go to a worker (starting one costs more than this). */
export const DECODE_INLINE_MAX_BYTES = 256 * 1024;

const DECODE_WORKER_URL = siblingModule('decodeWorker', import.meta.url);

/** The verdict on each transaction, by hash. */
export async function txVerdicts(
  transactions: readonly LoggedTransaction[],
  { workerUrl = DECODE_WORKER_URL }: { workerUrl?: URL } = {},
): Promise<Map<Hex, TxVerdict>> {
  const bytes = transactions.reduce((sum, tx) => sum + (tx.input.length - 2) / 2, 0);
  const verdicts =
    bytes <= DECODE_INLINE_MAX_BYTES ? transactions.map(txVerdict) : await inWorker(transactions, workerUrl);
  return new Map(transactions.map((tx, i) => [tx.hash, verdicts[i] as TxVerdict]));
}

function inWorker(transactions: readonly LoggedTransaction[], workerUrl: URL): Promise<TxVerdict[]> {
  return new Promise((resolve, reject) => {
    const { entry, eval: isEval } = workerEntry(workerUrl);
    const worker = new Worker(entry, { eval: isEval, workerData: transactions });
    let answer: TxVerdict[] | undefined;
    worker.once('message', (verdicts: TxVerdict[]) => {
      answer = verdicts;
    });
    worker.once('error', reject);
    worker.once('exit', (code) =>
      answer && answer.length === transactions.length
        ? resolve(answer)
        : reject(new Error(`the decoding worker exited with code ${code} before answering`)),
    );
  });
}
