// `arkivector verify`: checks an answer a gateway gave (the REST answer body, and the request body it
// answered) against the chain through an RPC the user trusts; no gateway is asked. Also the printer of
// a report, shared with `search --verify`.
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import type { VerifyReport } from '../verify/index.ts';
import { VERIFY_COMPLETE_MAX, VERIFY_COMPLETE_MAX_RAISED } from '../verify/limits.ts';
import { clientEnv } from '../clientConfig.ts';
import type { Io } from './command.ts';

/** Exit codes of `verify` (and of `search --verify`): a verdict, or a usage error. */
export const VERIFY_EXIT = { verified: 0, refuted: 1, usage: 2, unverifiable: 3 } as const;

export const VERIFY_HELP = `usage: arkivector verify --rpc URL --collection NAME --answer FILE [--request FILE] [options]

Check an answer of an arkivector node (search, get, count or list: the REST answer body, as JSON) against
the chain, through an Arkiv RPC you trust, without trusting the node: the block and its hash, every
result (entity, fields, filter, distance), the order, and completeness when the collection holds at most
${VERIFY_COMPLETE_MAX.toLocaleString('en-US')} vector entities at that block. FILE - reads standard input.

options:
  --rpc URL            the Arkiv DB-chain JSON-RPC endpoint to trust [ARKIVECTOR_RPC]
  --collection NAME    the collection the answer is about
  --answer FILE        the answer body (JSON)
  --request FILE       the request body (JSON) it answered: where, filter, k, vector (get: may be omitted)
  --complete           check completeness up to ${VERIFY_COMPLETE_MAX_RAISED.toLocaleString('en-US')} vector entities (more RPC calls)
  --owner 0xADDR       the definition owner the node pins for NAME (serve --collection-owner)
  --json               print the report as JSON
  -h, --help           show this help

exit codes: 0 every check verified, 1 a check refuted, 2 usage error, 3 something could not be verified`;

async function readJson(file: string, what: string, io: Io): Promise<Record<string, unknown>> {
  let text: string;
  try {
    if (file === '-') {
      const chunks: Buffer[] = [];
      for await (const chunk of io.stdin) chunks.push(Buffer.from(chunk as Buffer));
      text = Buffer.concat(chunks).toString('utf8');
    } else text = await readFile(file, 'utf8');
  } catch (error) {
    throw new VerifyUsageError(`cannot read ${what} ${file}: ${(error as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new VerifyUsageError(`${what} ${file} is not JSON`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new VerifyUsageError(`${what} ${file} is not a JSON object`);
  return value as Record<string, unknown>;
}

class VerifyUsageError extends Error {}

/** The report as lines: the verdict, then each check (failed ones with their evidence or reason). */
export function describeReport(report: VerifyReport): string {
  const { cost } = report;
  const lines = [
    `${report.verdict}: ${report.kind} answer of ${report.collection} at block ${report.block} (${report.block_hash ?? 'no hash'}): ${report.checks.length} checks, ${cost.calls} RPC calls in ${cost.requests} requests, ${cost.ms} ms`,
  ];
  for (const c of report.checks) {
    const said = c.evidence ?? c.reason;
    const recall = typeof c.detail?.recall === 'number' ? ` recall ${c.detail.recall}` : '';
    lines.push(
      `  ${c.verdict.padEnd(12)} ${c.check}${c.subject ? ` ${c.subject}` : ''}${recall}${said ? `: ${said}` : ''}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

export function exitOf(report: VerifyReport): number {
  return VERIFY_EXIT[report.verdict];
}

export async function runVerify(args: string[], io: Io): Promise<number> {
  try {
    const { values } = parseArgs({
      args,
      options: {
        rpc: { type: 'string' },
        collection: { type: 'string' },
        answer: { type: 'string' },
        request: { type: 'string' },
        complete: { type: 'boolean' },
        owner: { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    });
    if (values.help) {
      io.stdout.write(`${VERIFY_HELP}\n`);
      return VERIFY_EXIT.verified;
    }
    const rpc = values.rpc ?? clientEnv(io.env).rpc;
    if (!rpc) throw new VerifyUsageError('--rpc URL is required (the chain to check against)');
    if (!values.collection) throw new VerifyUsageError('--collection NAME is required');
    if (!values.answer) throw new VerifyUsageError('--answer FILE is required');
    if (values.answer === '-' && values.request === '-')
      throw new VerifyUsageError('only one of --answer and --request can read standard input');
    if (values.owner !== undefined && !/^0x[0-9a-fA-F]{40}$/.test(values.owner))
      throw new VerifyUsageError('--owner must be an address (0x and 40 hex digits)');
    const answer = await readJson(values.answer, 'answer', io);
    const request = values.request === undefined ? undefined : await readJson(values.request, 'request', io);
    const { verifyAnswer, VerifyInputError } = await import('../verify/index.ts');
    let report: VerifyReport;
    try {
      report = await verifyAnswer({
        rpc,
        collection: values.collection,
        answer,
        request,
        complete: values.complete === true,
        owner: values.owner,
      });
    } catch (error) {
      if (error instanceof VerifyInputError) throw new VerifyUsageError(error.message);
      throw error;
    }
    io.stdout.write(values.json ? `${JSON.stringify(report)}\n` : describeReport(report));
    return exitOf(report);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (error instanceof VerifyUsageError || (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS'))) {
      io.stderr.write(`arkivector verify: ${(error as Error).message}\n(see arkivector verify --help)\n`);
      return VERIFY_EXIT.usage;
    }
    throw error;
  }
}
