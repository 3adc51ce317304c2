// The `arkivector` command line: `serve` runs the gateway (MCP + REST) following a chain or the embedded
// devnet; `devnet` runs the local Arkiv node alone.
import { infoRequest, versionLine } from './cliInfo.ts';
import { CLIENT_COMMANDS, helpFor, runClientCommand, USAGE } from './commands/index.ts';
// The node's modules are imported by `serve` and `devnet` when they run, so the client commands start fast.

/** A usage mistake; `command` names the command whose help to print (else the top-level usage). */
class UsageError extends Error {
  constructor(
    message: string,
    readonly command?: 'serve' | 'devnet',
  ) {
    super(message);
  }
}

const isParseArgsError = (error: unknown) => {
  // Anything may be thrown (a damaged state file once threw an object whose `code` was not a string).
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS');
};

/** Runs `serve` or `devnet`; a flag it refuses is a usage error of that command, answered with its help. */
async function runNodeCommand(command: 'serve' | 'devnet', args: string[]): Promise<void> {
  try {
    await (command === 'serve' ? runServe(args) : runDevnet(args));
  } catch (error) {
    if (error instanceof UsageError || isParseArgsError(error)) throw new UsageError((error as Error).message, command);
    throw error;
  }
}

/** The configuration `parse` reads; a ConfigError is a usage mistake. */
async function configOf<T>(parse: (config: typeof import('./config.ts')) => T): Promise<T> {
  const config = await import('./config.ts');
  try {
    return parse(config);
  } catch (error) {
    if (error instanceof config.ConfigError) throw new UsageError(error.message);
    throw error;
  }
}

async function runDevnet(args: string[]): Promise<void> {
  const config = await configOf((c) => c.parseDevnetConfig(args));
  const { startDevnet } = await import('./devnet/index.ts');
  const started = Date.now();
  // One process per chain file: two devnets appending to it rewrite each other's blocks.
  const { lockData } = await import('./dataLock.ts');
  const lock = config.stateFile === undefined ? undefined : await lockData({ file: config.stateFile }, '--state FILE');
  const devnet = await startDevnet(config);
  const lines = [
    config.protocol === 'dbchain'
      ? 'arkivector devnet: an Arkiv DB-chain JSON-RPC node for development (registry 0x4400000000000000000000000000000000000044)'
      : 'arkivector devnet: an Arkiv v1-compatible JSON-RPC node for development',
    '',
    'Available accounts (test mnemonic, never use these keys for real funds)',
    '========================================================================',
    ...devnet.accounts.map((a, i) => `(${i}) ${a.address} (10000 ETH)`),
    '',
    'Private keys',
    '============',
    ...devnet.accounts.map((a, i) => `(${i}) ${a.privateKey}`),
    '',
    `Chain id:   ${devnet.chainId}`,
    `Head block: ${devnet.headNumber}${config.stateFile ? ` (state file ${config.stateFile})` : ''}`,
    `Listening:  ${devnet.url} (WebSocket ${devnet.wsUrl}) after ${Date.now() - started} ms`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  const shutdown = async () => {
    await devnet.stop();
    await lock?.release();
    process.exit(0);
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

/** `arkivector model pull [NAME]`: the model's folder on stdout, progress on stderr. */
async function runModel(args: string[]): Promise<void> {
  const { positionals, modelHub: hub, modelCache } = await configOf((c) => c.parseModelPullConfig(args));
  const [action, name, ...extra] = positionals;
  if (action !== 'pull' || extra.length > 0) throw new UsageError('usage: arkivector model pull [NAME]');
  const { ensureModel, parseLocalModel } = await import('./embedder/local/index.ts');
  let ref: ReturnType<typeof parseLocalModel>;
  try {
    ref = parseLocalModel(name ?? '');
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (ref.kind === 'path') throw new UsageError(`${ref.path} is a folder: it is used as it is, nothing to pull`);
  if (hub === 'off') throw new UsageError('--model-hub off: fetching is off');
  let lastFile = '';
  let lastShown = 0;
  const folder = await ensureModel(ref.model, {
    root: modelCache,
    hub,
    onProgress({ file, receivedBytes, totalBytes }) {
      const now = Date.now();
      if (file === lastFile && now - lastShown < 1000 && receivedBytes !== totalBytes) return;
      lastFile = file;
      lastShown = now;
      const of = totalBytes ? ` of ${(totalBytes / 1e6).toFixed(1)}` : '';
      process.stderr.write(`${ref.model.repo}: ${file} ${(receivedBytes / 1e6).toFixed(1)}${of} MB\n`);
    },
  });
  process.stdout.write(`${folder}\n`);
}

async function runServe(args: string[]): Promise<void> {
  const config = await configOf((c) => c.parseServeConfig(args));
  const { connectionBanner, createLogger, startGateway } = await import('./node/index.ts');
  const logger = createLogger(config.logLevel, config.logFormat);
  const gateway = await startGateway(config, logger);
  // stdout belongs to MCP in stdio mode; the banner goes to stderr there.
  (config.stdio ? process.stderr : process.stdout).write(`${connectionBanner(gateway)}\n`);
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, 'shutting down');
    await gateway.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  if (config.stdio) process.stdin.once('end', () => void shutdown('stdin closed'));
}

async function main(argv: string[]): Promise<void> {
  if (infoRequest(argv) === 'version') return void process.stdout.write(`${versionLine()}\n`);
  const [command, ...rest] = argv;
  if (command !== undefined && command in CLIENT_COMMANDS) {
    process.exitCode = await runClientCommand(command, rest);
    return;
  }
  if (
    (command === 'serve' || command === 'devnet' || command === 'model') &&
    (rest.includes('--help') || rest.includes('-h'))
  ) {
    process.stdout.write(`${await helpFor([command])}\n`);
    return;
  }
  switch (command) {
    case 'devnet':
    case 'serve':
      return runNodeCommand(command, rest);
    case 'model':
      return runModel(rest);
    case undefined:
    case 'help':
    case '--help':
    case '-h': {
      const help = await helpFor(rest);
      if (help === undefined) throw new UsageError(`no command ${JSON.stringify(rest.join(' '))}`);
      process.stdout.write(`${help}\n`);
      return;
    }
    default:
      throw new UsageError(`unknown command ${JSON.stringify(command)}`);
  }
}

main(process.argv.slice(2)).catch(async (error: unknown) => {
  if (error instanceof UsageError || isParseArgsError(error)) {
    const command = error instanceof UsageError ? error.command : undefined;
    const help = command ? await helpFor([command]) : USAGE;
    process.stderr.write(`arkivector: ${(error as Error).message}\n${help}\n`);
    process.exit(2);
  }
  // A person at a terminal reads one plain line; a service's log collector gets the JSON log line.
  const message = (error as Error).message;
  process.stderr.write(
    process.stderr.isTTY ? `arkivector: ${message}\n` : `${JSON.stringify({ level: 'fatal', msg: message })}\n`,
  );
  process.exit(1);
});
