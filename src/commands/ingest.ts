// `arkivector ingest`: keeps folders of documents and a collection in sync through a running gateway.
import { lstat } from 'node:fs/promises';
import { INGEST_CHUNK_MAX_CHARS, INGEST_CHUNK_OVERLAP_CHARS } from '../ingest/chunk.ts';
import { progressPrinter, summaryLine } from '../ingest/progress.ts';
import { IngestSetupError, ingestOnce, type IngestOptions, prepareCollection } from '../ingest/run.ts';
import type { PassSummary } from '../ingest/sync.ts';
import { WalkError } from '../ingest/walk.ts';
import { mcpDeleter } from '../ingest/mcpDeleter.ts';
import { clientEnv } from '../clientConfig.ts';
import { type CommandSpec, type Io, runCommand, UsageError } from './command.ts';

export const ingestSpec: CommandSpec = {
  name: 'ingest',
  operands: 'PATH…',
  summary:
    'Keep files and folders of text, Markdown, HTML and PDF in sync with a collection: one entity per chunk ' +
    '(attributes source, chunk, content_sha), embedded by the gateway; unchanged chunks are not written.',
  details: [
    `Chunks: split at headings and paragraphs, at most ${INGEST_CHUNK_MAX_CHARS} characters, ` +
      `${INGEST_CHUNK_OVERLAP_CHARS} characters of overlap.`,
    'A directory PATH is its own root: source is the path relative to it (a file PATH: its name).',
    'Examples:',
    '  arkivector ingest ~/notes --collection notes --create',
    '  arkivector ingest ~/notes --collection notes --prune --dry-run',
    '  arkivector ingest ~/notes --collection notes --prune --watch',
  ].join('\n'),
  flags: {
    collection: { type: 'string', short: 'c', arg: 'NAME', description: 'the collection to keep in sync (required)' },
    create: { type: 'boolean', description: 'create the collection when it does not exist' },
    'dry-run': { type: 'boolean', description: 'print what would be created, updated, deleted; write nothing' },
    prune: { type: 'boolean', description: 'delete the chunks of sources whose files are gone' },
    watch: { type: 'boolean', description: 'after the first pass, follow the paths and sync changes until Ctrl-C' },
    root: { type: 'string', arg: 'DIR', description: 'name sources relative to DIR instead of each PATH' },
  },
};

export function runIngest(args: string[], io: Io): Promise<number> {
  let failedFiles = false;
  return runCommand(ingestSpec, args, io, async ({ client, values, positionals, json }) => {
    const collection = values.collection as string | undefined;
    if (!collection) throw new UsageError('ingest needs --collection NAME');
    if (!positionals.length) throw new UsageError('ingest needs at least one PATH');
    if (values.watch && values['dry-run']) throw new UsageError('--watch and --dry-run do not go together');
    // A mistyped path is a usage error, found before the gateway is asked anything.
    for (const path of positionals)
      await lstat(path).catch((error: NodeJS.ErrnoException) => {
        throw new UsageError(`${path}: ${error.code ?? error.message}`);
      });
    const controller = new AbortController();
    let stops = 0;
    const onSignal = () => {
      // The first Ctrl-C lets the queued files finish; the second leaves at once.
      if (++stops > 1) process.exit(130);
      io.stderr.write('\ningest: stopping after the files under way (Ctrl-C again to leave now)\n');
      controller.abort();
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    const printer = progressPrinter(io.stderr as NodeJS.WritableStream & { isTTY?: boolean });
    const deleter = mcpDeleter((values.url as string | undefined) ?? clientEnv(io.env).url, clientEnv(io.env).token);
    const options: IngestOptions = {
      client,
      deleter,
      collection,
      paths: positionals,
      root: values.root as string | undefined,
      create: values.create === true,
      dryRun: values['dry-run'] === true,
      prune: values.prune === true,
      signal: controller.signal,
      onProgress: (p) => printer.update(p),
    };
    const print = (summary: PassSummary & { found?: unknown }) => {
      printer.clear();
      const { found: _found, ...shown } = summary;
      if (summary.failed.length) failedFiles = true;
      if (json) {
        io.stdout.write(`${JSON.stringify(shown)}\n`);
        return;
      }
      for (const s of summary.skipped) io.stderr.write(`skipped ${s.path}: ${s.reason}\n`);
      for (const f of summary.failed) io.stderr.write(`failed ${f.source}: ${f.reason}\n`);
      io.stdout.write(`${summaryLine(summary)}\n`);
    };
    try {
      const remote = await prepareCollection(options);
      const first = await ingestOnce(options, remote);
      print(first);
      if (values.watch && !controller.signal.aborted) {
        const { watchAndSync } = await import('../ingest/watch.ts');
        await watchAndSync(
          { ...options, signal: controller.signal },
          remote,
          new Map(first.found.map((f) => [f.path, f.source])),
          print,
          () => io.stderr.write('ingest: watching for changes (Ctrl-C to stop)\n'),
          (error) => io.stderr.write(`ingest: ${(error as Error).message}\n`),
        );
      }
    } catch (error) {
      if (error instanceof IngestSetupError || error instanceof WalkError) throw new UsageError(error.message);
      throw error;
    } finally {
      await deleter.close();
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  }).then((code) => (code === 0 && failedFiles ? 1 : code));
}
