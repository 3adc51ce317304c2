// The generation a node with --data-dir last followed (`--protocol auto`), remembered beside its snapshots:
// a node whose RPC does not answer at start follows it instead of waiting.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Logger } from 'pino';
import { detectProtocol, type ChainProtocol, type RpcTransport } from '../chain/index.ts';
import { reasonOf, until } from './chainStart.ts';

/** Where a node with --data-dir remembers which generation `--protocol auto` found. */
const PROTOCOL_FILE = 'protocol';

/**
 * `--protocol auto`: asks the node; with a data dir, remembers the answer, and when the node does not answer
 * by `deadline` (or errs), follows the generation remembered there.
 */
export async function detectOrRemember(
  transport: RpcTransport,
  dataDir: string | undefined,
  deadline: number,
  logger: Logger,
): Promise<{ protocol: ChainProtocol; protocolSource: 'detected' | 'remembered' }> {
  const file = dataDir ? join(dataDir, PROTOCOL_FILE) : undefined;
  const remembered = file ? (await readFile(file, 'utf8').catch(() => '')).trim() : '';
  const detecting = detectProtocol(transport);
  const answer = remembered === 'v1' || remembered === 'dbchain' ? await until(detecting, deadline) : await detecting;
  if (typeof answer === 'string' && answer !== 'timeout') {
    if (file) await mkdir(dirname(file), { recursive: true }).then(() => writeFile(file, `${answer}\n`));
    return { protocol: answer, protocolSource: 'detected' };
  }
  if (remembered !== 'v1' && remembered !== 'dbchain') throw answer;
  detecting.catch(() => undefined);
  logger.warn(
    { protocol: remembered, reason: reasonOf(answer) },
    'the RPC does not answer: following the generation this data dir last followed',
  );
  return { protocol: remembered, protocolSource: 'remembered' };
}
