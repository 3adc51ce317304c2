// `--version` and `--help` for every command of `arkivector`, answered before a command parses its own
// options (which would refuse them as unknown).
import { VERSION } from './packageInfo.ts';

export { VERSION };

/**
 * What an argument list asks for besides running a command: its version or its usage. Only arguments
 * before a `--` count.
 * @example infoRequest(['serve', '--help']) // 'help'
 */
export function infoRequest(argv: readonly string[]): 'version' | 'help' | undefined {
  const end = argv.indexOf('--');
  const args = end < 0 ? argv : argv.slice(0, end);
  if (args[0] === 'version' || args.includes('--version') || args.includes('-V')) return 'version';
  if (args[0] === undefined || args[0] === 'help' || args.includes('--help') || args.includes('-h')) return 'help';
  return undefined;
}

/** The line `arkivector --version` prints. */
export const versionLine = () => `arkivector ${VERSION}`;
