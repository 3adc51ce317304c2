// Worker-thread entry of a decoding (started by decodeThread.ts): the verdict on each transaction it was
// handed (txBounds.ts), posted back in order. Any throw reaches the main thread as the worker's 'error' event.
import { parentPort, workerData } from 'node:worker_threads';
import type { LoggedTransaction } from './reads.ts';
import { txVerdict } from './txBounds.ts';

parentPort?.postMessage((workerData as LoggedTransaction[]).map(txVerdict));
