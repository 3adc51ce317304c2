// What this node can do with text, said once for every surface that tells an agent or an operator (MCP
// instructions, tool descriptions, the banner): which embedder (local model, endpoint, or none), so which
// search modes answer and whether text writes work. Generated from the node's context, never hard-coded.
import type { Embedder } from '../src/service/context.ts';

export interface TextFacts {
  /** undefined: no embedder (--embedder none). */
  model?: string;
  kind?: 'local' | 'http';
}

export const textFacts = (embedder: Embedder | undefined): TextFacts =>
  embedder ? { model: embedder.model, kind: embedder.kind ?? 'http' } : {};

/** A key that changes whenever the generated texts would (tool listings are cached by it). */
export const factsKey = (facts: TextFacts): string => `${facts.kind ?? 'none'}:${facts.model ?? ''}`;

/** One sentence: who embeds text here, or that nothing does and what works instead. */
export function embedderSentence(facts: TextFacts): string {
  if (!facts.model)
    return 'This node has no embedder (--embedder none): collections need dim, entities need a vector, and text search works only with mode "keyword" (BM25 over documents); semantic and hybrid answer embedder_not_configured.';
  const how =
    facts.kind === 'local'
      ? `in this process with the model ${facts.model} (fetched once into the local cache; until it is ready text calls answer embedder_unavailable, try again shortly)`
      : `with ${facts.model} through an embeddings endpoint`;
  return `This node embeds text ${how}: searches by text use mode semantic by default, and keyword or hybrid also match words.`;
}
