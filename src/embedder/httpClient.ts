// Client for an OpenAI-compatible embeddings endpoint (--embedder URL --embedder-model NAME): Ollama,
// LM Studio, llama.cpp server, vLLM, TEI, OpenAI. Inputs go out in batches of at most
// EMBEDDER_MAX_BATCH; the transport rules (auth, timeout, retries, answer checks) are in httpEndpoint.ts.
// Its state (for /v1/status, the banner and the console) is the last call's outcome: ready, or failed with
// the cause and the ways out (httpFailure.ts).
// The key, if any (ARKIVECTOR_EMBEDDER_KEY, read by the configuration), is never logged.
import { embedderEndpoint, type EmbedderEndpointOptions } from './httpEndpoint.ts';
import { EndpointFailure } from './httpFailure.ts';
import type { Embedder, EmbedderState } from './types.ts';

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
/**
 * How old a failure must be before reading the state asks the server again (one probe, in the background):
 * a server that came back shows as ready in /v1/status without waiting for someone's text call.
 */
export const EMBEDDER_REPROBE_MS = 30_000;

export interface BatchEmbedder extends Embedder {
  /** Embeds every text, in order, in requests of at most `maxBatch` inputs. */
  embedMany(texts: readonly string[]): Promise<number[][]>;
  state(): EmbedderState;
}

export interface EmbedderOptions extends EmbedderEndpointOptions {
  model: string;
  maxBatch?: number;
  /** Default EMBEDDER_REPROBE_MS. */
  reprobeMs?: number;
  onState?(state: EmbedderState): void;
}

export function createEmbedder(options: EmbedderOptions): BatchEmbedder {
  const endpoint = embedderEndpoint(options);
  const maxBatch = Math.max(1, options.maxBatch ?? EMBEDDER_MAX_BATCH);
  const reprobeMs = options.reprobeMs ?? EMBEDDER_REPROBE_MS;
  const source = endpoint.safeUrl;
  let state: EmbedderState = { state: 'idle', source };
  let failedAt = 0;
  let probing: Promise<unknown> | undefined;
  /** The width of the first answer: the model's; another width later is a wrong answer. */
  let width: number | undefined;
  const set = (next: EmbedderState) => {
    state = next;
    options.onState?.(next);
  };
  const track = async <T>(call: Promise<T>): Promise<T> => {
    try {
      const out = await call;
      if (state.state !== 'ready' && width !== undefined) set({ state: 'ready', source, dim: width });
      return out;
    } catch (error) {
      if (error instanceof EndpointFailure) {
        failedAt = Date.now();
        set({ state: 'failed', source, error: error.reason, cause: error.failure, ways_out: error.waysOut });
      }
      throw error;
    }
  };
  const embedMany = (texts: readonly string[]): Promise<number[][]> =>
    track(
      (async () => {
        const out: number[][] = [];
        // One batch at a time: local servers embed on one device, parallel requests only queue there.
        for (let start = 0; start < texts.length; start += maxBatch) {
          const vectors = await endpoint.post(options.model, texts.slice(start, start + maxBatch));
          const got = vectors[0]?.length;
          if (got !== undefined && width !== undefined && got !== width)
            throw endpoint.failure(
              options.model,
              'wrong_dimension',
              `answered ${got} numbers per vector where ${options.model} gave ${width} before`,
              200,
            );
          width ??= got;
          out.push(...vectors);
        }
        return out;
      })(),
    );
  const embed = async (text: string): Promise<number[]> => {
    const [vector] = await embedMany([text]);
    if (!vector) throw endpoint.failure(options.model, 'bad_answer', 'answered no embedding', 200);
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
    knownDimension: () => width,
    state() {
      if (state.state === 'failed' && !probing && Date.now() - failedAt >= reprobeMs) {
        probing = embed(EMBEDDER_PROBE_TEXT)
          .catch(() => {})
          .finally(() => {
            probing = undefined;
          });
      }
      return { ...state };
    },
  };
}
