// The node's embedder, chosen by its configuration: an endpoint (--embedder URL), none (--embedder
// none), or the local model (the default). A local model already on disk loads now, in the background;
// one that is not is fetched at the first text call, so a node never reaches the hub unless someone
// embeds text (with --model-hub off, never).
import type { Logger } from 'pino';
import { createEmbedder } from './httpClient.ts';
import type { LocalModelRef } from './local/catalog.ts';
import { createLocalEmbedder } from './local/index.ts';
import type { FetchProgress } from './local/modelCache.ts';
import type { Embedder } from './types.ts';

export interface EmbedderChoice {
  /** --embedder URL and --embedder-model. */
  endpoint?: { url: string; model: string };
  /** The endpoint's key (ARKIVECTOR_EMBEDDER_KEY). */
  apiKey?: string;
  /** --embedder local[:MODEL|:PATH]. */
  local?: LocalModelRef;
  /** --model-hub: where local models are fetched from; `off`: never. */
  modelHub: string;
  /** The local model cache's root. */
  modelCache: string;
}

/** The embedder (none for --embedder none) and how to stop it. */
export function chooseEmbedder(
  choice: EmbedderChoice,
  logger: Logger,
): { embedder?: Embedder; close?: () => Promise<void> } {
  if (choice.endpoint) {
    const embedder = createEmbedder({
      ...choice.endpoint,
      apiKey: choice.apiKey,
      onRetry: ({ attempt, delayMs, reason }) =>
        logger.debug({ attempt, delay_ms: Math.round(delayMs), reason }, 'embedder retry'),
    });
    // Tell the operator now, not at the first text search, whether the embedder answers (and its dimension).
    embedder.dimension().then(
      (dim) => logger.info({ model: embedder.model, dim }, 'embedder answers'),
      (error: Error) => logger.warn({ model: embedder.model, error: error.message }, 'embedder does not answer yet'),
    );
    return { embedder };
  }
  if (!choice.local) return {};
  const embedder = createLocalEmbedder(choice.local, {
    hub: choice.modelHub,
    cacheRoot: choice.modelCache,
    onProgress: fetchProgressLog(logger),
    onState: (state) => {
      const fields = { model: embedder.model, source: state.source };
      if (state.state === 'ready') logger.info({ ...fields, dim: state.dim }, 'local embedder ready');
      else if (state.state === 'failed') logger.warn({ ...fields, error: state.error }, 'local embedder unavailable');
      else if (state.state === 'fetching') logger.info(fields, 'local embedder: fetching the model');
    },
  });
  // With fetching off, a model not on disk fails now (nothing is fetched): the banner, /v1/status and the
  // log say why text calls fail before one is made, instead of promising a fetch that never happens.
  if (embedder.onDisk() || choice.modelHub === 'off') embedder.ready().catch(() => {});
  else
    logger.info(
      { model: embedder.model, hub: choice.modelHub },
      'local embedder: the model is fetched at the first text call (or ahead of time: arkivector model pull)',
    );
  return { embedder, close: () => embedder.close() };
}

/** Progress of a model fetch on stderr (the log): each file's start and end, and every 10 % between. */
function fetchProgressLog(logger: Logger): (progress: FetchProgress) => void {
  let file = '';
  let shown = -1;
  return ({ file: current, receivedBytes, totalBytes }) => {
    if (current !== file) {
      file = current;
      shown = -1;
    }
    const tenths = totalBytes ? Math.floor((receivedBytes / totalBytes) * 10) : -1;
    if (tenths === shown) return;
    shown = tenths;
    logger.info(
      {
        file,
        received_mb: +(receivedBytes / 1e6).toFixed(1),
        total_mb: totalBytes ? +(totalBytes / 1e6).toFixed(1) : null,
      },
      'model fetch',
    );
  };
}
