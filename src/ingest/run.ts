// `arkivector ingest`: keeps a folder and a collection in sync, once or (with --watch) as files change.
import { GatewayProblemError, type RestClient } from '../client/restClient.ts';
import type { Deleter } from './mcpDeleter.ts';
import { INGEST_ATTRIBUTES, RemoteCollection } from './remote.ts';
import { ingestPass, type PassSummary, type Progress } from './sync.ts';
import { type FoundFile, walk } from './walk.ts';

/** Quiet time after the last file event before --watch syncs. */
export const INGEST_WATCH_DEBOUNCE_MS = 1000;

export interface IngestOptions {
  client: RestClient;
  deleter: Deleter;
  collection: string;
  paths: string[];
  root?: string;
  create: boolean;
  dryRun: boolean;
  prune: boolean;
  signal?: AbortSignal;
  onProgress?: (progress: Progress) => void;
}

export class IngestSetupError extends Error {
  override name = 'IngestSetupError';
}

/** The collection's dimension, creating it first with --create; undefined in a dry run before creation. */
export async function prepareCollection(options: IngestOptions): Promise<RemoteCollection | undefined> {
  const { client, collection } = options;
  let info;
  try {
    info = await client.getCollection(collection);
  } catch (error) {
    if (!(error instanceof GatewayProblemError) || error.problem.code !== 'collection_not_found') throw error;
    if (!options.create)
      throw new IngestSetupError(`collection ${JSON.stringify(collection)} does not exist: pass --create to create it`);
    if (options.dryRun) return undefined;
    await client.createCollection({
      name: collection,
      metric: 'cosine',
      attributes: { ...INGEST_ATTRIBUTES },
      description: 'Document chunks written by arkivector ingest',
    });
    info = await client.getCollection(collection);
  }
  const attributes: Record<string, string> = info.attributes ?? {};
  const wrong = Object.entries(INGEST_ATTRIBUTES).filter(
    ([name, type]) => attributes[name] !== type && !(name === 'chunk' && attributes[name] === 'uint'),
  );
  if (wrong.length)
    throw new IngestSetupError(
      `collection ${JSON.stringify(collection)} must declare ${wrong.map(([n, t]) => `${n}: ${t}`).join(', ')} ` +
        '(ingest into a new collection with --create)',
    );
  // Ingest manages only the chunks its gateway's signer owns: another writer's entity with the same
  // source (possible in an open collection) is not ours to replace, and deleting it would fail every run.
  const signer: unknown = (await client.status()).signer?.address;
  return new RemoteCollection(client, collection, Number(info.dim), typeof signer === 'string' ? signer : undefined);
}

/** One full pass over the paths (and, with --prune, the sources no longer among them). */
export async function ingestOnce(
  options: IngestOptions,
  remote: RemoteCollection | undefined,
  only?: { files: ReadonlySet<string>; removed: readonly string[] },
): Promise<PassSummary & { found: FoundFile[] }> {
  const walked = await walk(options.paths, options.root);
  const present = new Set(walked.files.map((f) => f.source));
  let removedSources: string[] = [];
  if (options.prune && remote) {
    removedSources = only
      ? only.removed.filter((s) => !present.has(s))
      : (await remote.sources()).filter((s) => !present.has(s));
  }
  const files = only ? walked.files.filter((f) => only.files.has(f.path)) : walked.files;
  const summary = await ingestPass({
    client: options.client,
    deleter: options.deleter,
    collection: options.collection,
    remote,
    files,
    removedSources,
    dryRun: options.dryRun,
    signal: options.signal,
    onProgress: options.onProgress,
  });
  summary.skipped.unshift(...walked.skipped);
  return { ...summary, found: walked.files };
}
