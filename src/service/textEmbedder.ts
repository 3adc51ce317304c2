// The one gate of every text path (semantic and hybrid search, search_rag's semantic branch, text
// upserts): the node needs an embedder, and a collection that records a model is only embedded with that
// model. Vectors of another model would be compared as if they meant the same thing.
import type { PublishedCollection } from '../../indexer/index.ts';
import type { Embedder, ReadableStore, ServiceContext } from './context.ts';
import { EmbedderMismatchError, EmbedderNotConfiguredError } from './errors.ts';

/**
 * @param notConfigured the embedder_not_configured message (what needed it and the way around it)
 * @throws EmbedderNotConfiguredError, EmbedderMismatchError
 */
export function textEmbedder(
  ctx: ServiceContext,
  collection: PublishedCollection<ReadableStore>,
  notConfigured?: string,
): Embedder {
  if (!ctx.embedder) throw new EmbedderNotConfiguredError(notConfigured);
  const wanted = collection.definition.embedder?.model;
  if (wanted !== undefined && wanted !== ctx.embedder.model)
    throw new EmbedderMismatchError(collection.name, wanted, ctx.embedder.model);
  return ctx.embedder;
}

/** Embeds in input order, in the endpoint's batches when the embedder batches. */
export async function embedTexts(embedder: Embedder, texts: readonly string[]): Promise<number[][]> {
  if (embedder.embedMany) return embedder.embedMany(texts);
  const out: number[][] = [];
  for (const text of texts) out.push(await embedder.embed(text));
  return out;
}
