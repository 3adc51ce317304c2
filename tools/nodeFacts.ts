// What this node can do with text, said once for every surface that tells an agent or an operator (MCP
// instructions, tool descriptions, the banner): which embedder (local model, endpoint, or none), so which
// search modes answer and whether text writes work. Generated from the node's context, never hard-coded.
import type { Embedder } from '../src/embedder/index.ts';

export interface TextFacts {
  /** undefined: no embedder (--embedder none). */
  model?: string;
  kind?: 'local' | 'http';
  /** A local model read from a folder (`local:PATH`), or fetched from the hub into the cache. */
  from?: 'folder' | 'hub';
  /** An embedder that failed: why, and when it is tried again. */
  failed?: { error: string; retry_at?: string };
}

export function textFacts(embedder: Embedder | undefined): TextFacts {
  if (!embedder) return {};
  const state = embedder.state?.();
  return {
    model: embedder.model,
    kind: embedder.kind ?? 'http',
    ...(embedder.from ? { from: embedder.from } : {}),
    ...(state?.state === 'failed' ? { failed: { error: state.error ?? 'unknown', retry_at: state.retry_at } } : {}),
  };
}

/** A key that changes whenever the generated texts would (tool listings are cached by it). */
export const factsKey = (facts: TextFacts): string => `${facts.kind ?? 'none'}:${facts.model ?? ''}`;

/** One sentence: who embeds text here, or that nothing does and what works instead. */
export function embedderSentence(facts: TextFacts): string {
  if (!facts.model)
    return 'This node has no embedder (--embedder none): collections need dim, entities need a vector, and text search works only with mode "keyword" (BM25 over documents); semantic and hybrid answer embedder_not_configured.';
  const how =
    facts.kind !== 'local'
      ? `with ${facts.model} through an embeddings endpoint`
      : facts.from === 'folder'
        ? `in this process with the model ${facts.model}, read from its folder (nothing is fetched)`
        : `in this process with the model ${facts.model} (fetched once from the model hub into the local cache, at the first text call)`;
  const waiting = facts.failed
    ? facts.kind !== 'local'
      ? ` Its last call failed: ${facts.failed.error}. Text calls answer embedder_unavailable with the ways out until the server answers again; use mode "keyword" meanwhile.`
      : ` It has failed: ${facts.failed.error}; it is not tried again before ${facts.failed.retry_at ?? 'the next text call'}. Until then text calls answer embedder_unavailable with the ways out; use mode "keyword" meanwhile.`
    : facts.kind !== 'local'
      ? ''
      : ' While the model is being fetched or loaded, text calls answer embedder_unavailable saying so: try again shortly. If it fails, embedder_unavailable says why, when it is tried again and the ways out (that is not "try again shortly"); mode "keyword" works meanwhile.';
  return `This node embeds text ${how}: searches by text use mode semantic by default, and keyword or hybrid also match words.${waiting}`;
}
