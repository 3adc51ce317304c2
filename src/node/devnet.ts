// The embedded devnet of a node started without --rpc: the chain on its stable port, reloaded from its
// state file, and the demo collections written into it when the chain is new.
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Logger } from 'pino';
import type { ServeConfig } from '../config.ts';
import { type Devnet, startDevnet } from '../devnet/index.ts';
import type { Closers } from './closers.ts';
import { seedDemo } from './demo.ts';

export interface EmbeddedChain {
  devnet: Devnet;
  /** The chain's state file, when it is kept across restarts. */
  stateFile?: string;
  /** The demo collections were written at this start. */
  seededDemo: boolean;
  /** The chain holds the demo collections (seeded now or at the first start of a kept chain). */
  demo: boolean;
}

export async function startEmbeddedChain(
  config: ServeConfig,
  logger: Logger,
  closers: Closers,
): Promise<EmbeddedChain> {
  const { devnet, stateFile } = await startEmbeddedDevnet(config, logger);
  closers.push(() => devnet.stop());
  logger.info(
    { rpc: devnet.url, chain_id: devnet.chainId, state: stateFile, head: devnet.headNumber },
    'embedded devnet started',
  );
  // A kept chain already holds what the first start seeded (and whatever agents wrote since).
  let seededDemo = false;
  if (config.demo && devnet.headNumber === 0) {
    seededDemo = true;
    const [demoAccount] = devnet.accounts;
    if (!demoAccount) throw new Error('the embedded devnet has no funded account to seed the demo with');
    const block = await seedDemo(devnet.url, demoAccount.privateKey, devnet.protocol);
    logger.info({ block: Number(block) }, 'demo collections notes and demo.docs written');
  }
  // Seeded now or at the first start of a kept chain (a chain first started with --no-demo and later
  // without it has no demo data, and shows the demo lines anyway: the searches then find nothing).
  return { devnet, stateFile, seededDemo, demo: config.demo };
}

/**
 * The embedded devnet on its stable port, reloading its state file when there is one. A data directory
 * that holds only a v1 chain (kept before the DB-chain became the default) keeps following it: that chain
 * is the user's memory, and a new empty chain beside it would look like a loss.
 */
async function startEmbeddedDevnet(
  config: ServeConfig,
  logger: Logger,
): Promise<{ devnet: Devnet; stateFile?: string }> {
  const keptV1 =
    config.keptV1DevnetState !== undefined &&
    config.devnetState !== undefined &&
    !existsSync(config.devnetState) &&
    existsSync(config.keptV1DevnetState);
  const stateFile = keptV1 ? config.keptV1DevnetState : config.devnetState;
  if (keptV1)
    logger.warn(
      { state: stateFile },
      'following the v1 devnet chain kept in the data directory (pass --protocol dbchain to start a DB-chain devnet beside it)',
    );
  if (stateFile) await mkdir(dirname(stateFile), { recursive: true });
  try {
    const devnet = await startDevnet({
      host: '127.0.0.1',
      port: config.devnetPort,
      blockTime: config.blockTime,
      stateFile,
      protocol: keptV1 || config.protocol === 'v1' ? 'v1' : 'dbchain',
    });
    return { devnet, stateFile };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE')
      throw new Error(
        `the embedded devnet cannot listen on 127.0.0.1:${config.devnetPort}: the port is in use (another arkivector or devnet?); pass --devnet-port N, or 0 for any free port`,
      );
    throw error;
  }
}
