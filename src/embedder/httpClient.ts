// Client for an OpenAI-compatible embeddings endpoint (--embedder URL --embedder-model NAME): Ollama,
// LM Studio, llama.cpp server, vLLM, TEI, OpenAI. Inputs go out in batches of at most
// EMBEDDER_MAX_BATCH; the transport rules (auth, timeout, retries, answer checks) are in httpEndpoint.ts.
// The key, if any (ARKIVECTOR_EMBEDDER_KEY, read by the configuration), is never logged.
import { embedderEndpoint, type EmbedderEndpointOptions } from './httpEndpoint.ts';
import type { Embedder } from './types.ts';
import { EmbedderUnavailableError } from './errors.ts';

export {
  EMBEDDER_BACKOFF_MS,
  EMBEDDER_MAX_ATTEMPTS,
  EMBEDDER_MAX_RESPONSE_BYTES,
  EMBEDDER_MAX_RETRY_AFTER_MS,
  EMBEDDER_TIMEOUT_MS,
} from './httpEndpoint.ts';

/** Most inputs sent in one request: TEI's default `--max-client-batch-size` (OpenAI takes 2048). */
export const EMBEDDER_MAX_BATCH = 32;
/** The text embedded once to learn the model's dimension. */
export const EMBEDDER_PROBE_TEXT = 'arkivector dimension probe';

export interface BatchEmbedder extends Embedder {
  /** Embeds every text, in order, in requests of at most `maxBatch` inputs. */
  embedMany(texts: readonly string[]): Promise<number[][]>;
}

export interface EmbedderOptions extends EmbedderEndpointOptions {
  model: string;
  maxBatch?: number;
}

export function createEmbedder(options: EmbedderOptions): BatchEmbedder {
  const endpoint = embedderEndpoint(options);
  const maxBatch = Math.max(1, options.maxBatch ?? EMBEDDER_MAX_BATCH);
  const embedMany = async (texts: readonly string[]): Promise<number[][]> => {
    const out: number[][] = [];
    // One batch at a time: local servers embed on one device, parallel requests only queue there.
    for (let start = 0; start < texts.length; start += maxBatch) {
      const vectors = await endpoint.post(options.model, texts.slice(start, start + maxBatch));
      const [expected] = out;
      const [got] = vectors;
      if (expected && got && got.length !== expected.length)
        throw new EmbedderUnavailableError(
          `the embedder at ${endpoint.safeUrl} answered garbage: ${got.length} dimensions after ${expected.length}`,
        );
      out.push(...vectors);
    }
    return out;
  };
  const embed = async (text: string): Promise<number[]> => {
    const [vector] = await embedMany([text]);
    if (!vector) throw new EmbedderUnavailableError(`the embedder at ${endpoint.safeUrl} answered no embedding`);
    return vector;
  };
  // Found by one probe; a failed probe is forgotten so the next call asks again.
  let dimension: Promise<number> | undefined;
  return {
    model: options.model,
    kind: 'http',
    embedMany,
    embed,
    dimension() {
      if (!dimension) {
        dimension = embed(EMBEDDER_PROBE_TEXT).then((vector) => vector.length);
        dimension.catch(() => {
          dimension = undefined;
        });
      }
      return dimension;
    },
  };
}
