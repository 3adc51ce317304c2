// One ingest pass: read each file, chunk it, compare with what the collection holds for its source, and
// write only the difference. Whole files are queued and written together in transactions of up to
// INGEST_BATCH_ENTITIES entities; an interruption lets the queued files finish, so no file is left half
// written by a stop, and a failed file costs only its own work: the next pass picks it up again.
import { GatewayProblemError, type RestClient } from '../client/restClient.ts';
import { UPSERT_MAX_ENTITIES } from '../service/limits.ts';
import { chunkText, INGEST_MAX_CHUNKS_PER_FILE } from './chunk.ts';
import { extractFile } from './extract.ts';
import { type ChunkEntity, type FilePlan, planFile, planRemoval } from './plan.ts';
import type { Deleter } from './mcpDeleter.ts';
import type { RemoteCollection } from './remote.ts';
import { politely } from './retry.ts';
import type { FoundFile } from './walk.ts';

/** Entities per upsert (one transaction): the gateway's own bound. */
export const INGEST_BATCH_ENTITIES = UPSERT_MAX_ENTITIES;
/** Entities queued before they are sent: whole files pack into full transactions, and a stop finishes this. */
export const INGEST_QUEUE_ENTITIES = 10 * INGEST_BATCH_ENTITIES;
/** Document characters per upsert, well under the gateway's 4 MiB request bound even for 4-byte UTF-8. */
export const INGEST_BATCH_CHARS = 512 * 1024;

export interface PassInput {
  client: RestClient;
  /** Deletes many chunks per transaction. */
  deleter: Deleter;
  collection: string;
  /** Undefined when the collection does not exist yet (a dry run before --create). */
  remote: RemoteCollection | undefined;
  files: readonly FoundFile[];
  /** Sources whose chunks all go (files deleted, with --prune). */
  removedSources: readonly string[];
  dryRun: boolean;
  signal?: AbortSignal;
  onProgress?: (progress: Progress) => void;
}

export interface Progress {
  files_total: number;
  files_done: number;
  chunks: number;
  written: number;
  deleted: number;
  started_ms: number;
}

export interface PassSummary {
  dry_run: boolean;
  collection: string;
  files: number;
  chunks: number;
  created: number;
  updated: number;
  deleted: number;
  unchanged: number;
  /** Transactions sent (a dry run: the transactions it would send). */
  transactions: number;
  skipped: { path: string; reason: string }[];
  failed: { source: string; reason: string }[];
  interrupted: boolean;
  block_number: number | null;
  duration_ms: number;
}

export async function ingestPass(input: PassInput): Promise<PassSummary> {
  const started = Date.now();
  const summary: PassSummary = {
    dry_run: input.dryRun,
    collection: input.collection,
    files: 0,
    chunks: 0,
    created: 0,
    updated: 0,
    deleted: 0,
    unchanged: 0,
    transactions: 0,
    skipped: [],
    failed: [],
    interrupted: false,
    block_number: null,
    duration_ms: 0,
  };
  const progress: Progress = {
    files_total: input.files.length + input.removedSources.length,
    files_done: 0,
    chunks: 0,
    written: 0,
    deleted: 0,
    started_ms: started,
  };
  const report = () => input.onProgress?.({ ...progress });
  let queue: FilePlan[] = [];
  let queued = 0;

  const flush = async () => {
    const plans = queue;
    queue = [];
    queued = 0;
    if (!plans.length) return;
    const countOnly = input.dryRun;
    const send = async (entities: ChunkEntity[]) => {
      const answer = await politely(() => input.client.upsert(input.collection, { entities, wait: 'indexed' }));
      summary.transactions += answer.tx_hashes?.length ?? 1;
      summary.block_number = answer.block_number ?? summary.block_number;
      progress.written += entities.length;
      report();
    };
    for (const batch of batches(plans)) {
      if (countOnly) {
        summary.transactions++;
        continue;
      }
      try {
        await send(batch.entities);
      } catch (error) {
        if (!(error instanceof GatewayProblemError)) throw error;
        const [only, ...others] = batch.plans;
        if (only && others.length === 0) {
          fail(only, error);
          continue;
        }
        // An upsert is refused whole: send each file of the batch alone, so one bad file fails alone.
        for (const plan of batch.plans) {
          const own = batch.entities.filter((e) => e.attributes.source === plan.source);
          try {
            await send(own);
          } catch (retryError) {
            if (!(retryError instanceof GatewayProblemError)) throw retryError;
            fail(plan, retryError);
          }
        }
      }
    }
    for (const batch of deleteBatches(plans.filter((p) => !failedSources.has(p.source)))) {
      if (countOnly) {
        summary.transactions++;
        continue;
      }
      try {
        const answer = await politely(() => input.deleter.delete(input.collection, batch.ids));
        summary.transactions += answer.tx_hashes.length;
        summary.block_number = answer.block_number ?? summary.block_number;
        progress.deleted += batch.ids.length;
        report();
      } catch (error) {
        if (!(error instanceof GatewayProblemError)) throw error;
        for (const plan of batch.plans) fail(plan, error);
      }
    }
    for (const plan of plans) {
      if (failedSources.has(plan.source)) continue;
      summary.created += plan.creates.length;
      summary.updated += plan.updates.length;
      summary.deleted += plan.deletes.length;
    }
  };
  const failedSources = new Set<string>();
  const fail = (plan: FilePlan, error: unknown) => {
    if (failedSources.has(plan.source)) return;
    failedSources.add(plan.source);
    summary.failed.push({ source: plan.source, reason: (error as Error).message });
  };
  const enqueue = async (plan: FilePlan) => {
    summary.unchanged += plan.unchanged;
    queue.push(plan);
    queued += plan.creates.length + plan.updates.length;
    if (queued >= INGEST_QUEUE_ENTITIES) await flush();
  };

  for (const file of input.files) {
    if (input.signal?.aborted) {
      summary.interrupted = true;
      break;
    }
    progress.files_done++;
    const extracted = await extractFile(file.path);
    if (!extracted.ok) {
      summary.skipped.push({ path: file.path, reason: extracted.reason });
      report();
      continue;
    }
    const chunks = chunkText(extracted.text);
    if (chunks.length > INGEST_MAX_CHUNKS_PER_FILE) {
      summary.skipped.push({ path: file.path, reason: `more than ${INGEST_MAX_CHUNKS_PER_FILE} chunks` });
      report();
      continue;
    }
    summary.files++;
    summary.chunks += chunks.length;
    progress.chunks += chunks.length;
    try {
      const remote = input.remote ? await input.remote.chunksOf(file.source) : [];
      await enqueue(planFile(file.source, chunks, remote, input.remote?.asOfBlock ?? 0));
    } catch (error) {
      if (!(error instanceof GatewayProblemError)) throw error;
      summary.failed.push({ source: file.source, reason: error.message });
    }
    report();
  }
  for (const source of input.removedSources) {
    if (input.signal?.aborted) {
      summary.interrupted = true;
      break;
    }
    progress.files_done++;
    try {
      if (input.remote) await enqueue(planRemoval(source, await input.remote.chunksOf(source)));
    } catch (error) {
      if (!(error instanceof GatewayProblemError)) throw error;
      summary.failed.push({ source, reason: error.message });
    }
  }
  await flush();
  summary.duration_ms = Date.now() - started;
  return summary;
}

interface Batch {
  entities: ChunkEntity[];
  plans: FilePlan[];
}

/** Packs the queued files' writes into upserts: whole files together while they fit, big files split. */
function batches(plans: readonly FilePlan[]): Batch[] {
  const out: Batch[] = [];
  let current: Batch = { entities: [], plans: [] };
  let chars = 0;
  for (const plan of plans) {
    for (const entity of [...plan.creates, ...plan.updates].sort((a, b) => a.attributes.chunk - b.attributes.chunk)) {
      if (current.entities.length >= INGEST_BATCH_ENTITIES || chars + entity.document.length > INGEST_BATCH_CHARS) {
        out.push(current);
        current = { entities: [], plans: [] };
        chars = 0;
      }
      current.entities.push(entity);
      chars += entity.document.length;
      if (current.plans.at(-1) !== plan) current.plans.push(plan);
    }
  }
  if (current.entities.length) out.push(current);
  return out;
}

/** Deletes of the queued files, up to INGEST_BATCH_ENTITIES per transaction, each file's in its own order. */
function deleteBatches(plans: readonly FilePlan[]): { ids: string[]; plans: FilePlan[] }[] {
  const out: { ids: string[]; plans: FilePlan[] }[] = [];
  let current: { ids: string[]; plans: FilePlan[] } = { ids: [], plans: [] };
  for (const plan of plans) {
    for (const id of plan.deletes) {
      if (current.ids.length >= INGEST_BATCH_ENTITIES) {
        out.push(current);
        current = { ids: [], plans: [] };
      }
      current.ids.push(id);
      if (current.plans.at(-1) !== plan) current.plans.push(plan);
    }
  }
  if (current.ids.length) out.push(current);
  return out;
}
