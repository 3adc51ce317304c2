// The embedder's one door: the interface the service uses, the OpenAI-compatible endpoint client, the
// local model, and the node's choice between them.
export type { Embedder, EmbedderState } from './types.ts';
export { EmbedderUnavailableError } from './errors.ts';
export { chooseEmbedder, type EmbedderChoice } from './choose.ts';
export {
  createEmbedder,
  EMBEDDER_BACKOFF_MS,
  EMBEDDER_MAX_ATTEMPTS,
  EMBEDDER_MAX_BATCH,
  EMBEDDER_MAX_RESPONSE_BYTES,
  EMBEDDER_MAX_RETRY_AFTER_MS,
  EMBEDDER_PROBE_TEXT,
  EMBEDDER_REPROBE_MS,
  EMBEDDER_TIMEOUT_MS,
  type BatchEmbedder,
  type EmbedderOptions,
} from './httpClient.ts';
export { type EndpointFailureCause, endpointWaysOut } from './httpFailure.ts';
export {
  catalogNames,
  createLocalEmbedder,
  DEFAULT_LOCAL_MODEL,
  ensureModel,
  type FetchProgress,
  LOCAL_EMBED_BATCH,
  LOCAL_READY_WAIT_MS,
  LOCAL_RETRY_AFTER_MS,
  LOCAL_RETRY_MAX_MS,
  type LocalEmbedder,
  type LocalEmbedderOptions,
  type LocalModelRef,
  MODEL_HUB_DEFAULT,
  ModelFetchError,
  modelFolder,
  modelName,
  parseLocalModel,
} from './local/index.ts';
