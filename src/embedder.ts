// Client for an OpenAI-compatible embeddings endpoint (--embedder URL --embedder-model NAME), used by
// semantic and hybrid search. The key, if any, comes from ARKIVECTOR_EMBEDDER_KEY and is never logged.
import { fetch } from 'undici';
import { ArkivectorError } from './errors.ts';
import type { Embedder } from './service/context.ts';
import { redactUrl } from './chain/transport.ts';

export function createEmbedder(options: { url: string; model: string; apiKey?: string; timeoutMs?: number }): Embedder {
  const endpoint = /\/embeddings\/?$/.test(options.url) ? options.url : `${options.url.replace(/\/$/, '')}/embeddings`;
  const safe = redactUrl(endpoint);
  return {
    model: options.model,
    async embed(text: string): Promise<number[]> {
      let response;
      try {
        response = await fetch(endpoint, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
          },
          body: JSON.stringify({ model: options.model, input: text }),
          signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
        });
      } catch {
        throw new ArkivectorError('internal', `the embedder at ${safe} cannot be reached`, { status: 502 });
      }
      const body = (await response.json().catch(() => undefined)) as { data?: { embedding?: unknown }[] } | undefined;
      const embedding = body?.data?.[0]?.embedding;
      if (
        !response.ok ||
        !Array.isArray(embedding) ||
        !embedding.every((x) => typeof x === 'number' && Number.isFinite(x))
      ) {
        throw new ArkivectorError(
          'internal',
          `the embedder at ${safe} answered HTTP ${response.status} without an embedding`,
          { status: 502 },
        );
      }
      return embedding as number[];
    },
  };
}
