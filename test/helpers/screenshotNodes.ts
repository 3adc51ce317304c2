// The two nodes `npm run screenshots` photographs: the demo node (embedded devnet, forgotten on exit, any
// free devnet port) and a node on the same chain that requires a token (for the token prompt). Kept apart
// from the script so a test can check what they are without a browser.
import { parseServeConfig, type ServeConfig } from '../../src/config.ts';

/** The token of the guarded node; it only ever guards a throwaway chain on 127.0.0.1. */
export const SCREENSHOT_TOKEN = 'screenshot-token';

export function demoNodeConfig(): ServeConfig {
  return parseServeConfig(
    ['--http', '127.0.0.1:0', '--devnet-port', '0', '--no-data-dir', '--block-time', '1', '--log-level', 'silent'],
    {},
  );
}

/** A node following `rpc` whose reads need a token: ARKIVECTOR_TOKENS is the `scope:secret` list. */
export function guardedNodeConfig(rpc: string): ServeConfig {
  return parseServeConfig(['--rpc', rpc, '--http', '127.0.0.1:0', '--log-level', 'silent'], {
    ARKIVECTOR_TOKENS: `read:${SCREENSHOT_TOKEN}`,
  });
}
