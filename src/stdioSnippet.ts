// The MCP client entry (`mcpServers.arkivector`) for a stdio node against the same chain as this node: one
// source for the start banner and the console's Connect page, so both carry the same flags (the RPC, the
// embedder and its model) and the same `env` block (the signer key, the embedder key), as placeholders.
import { redactUrl } from './redactUrl.ts';

/** What a stdio node needs to match this one; URLs as given (they are shown redacted where needed). */
export interface StdioFacts {
  rpc: string;
  embedder?: { url: string; model: string };
  /** This node signs: the stdio node needs a key too, or it is read-only. */
  signer: boolean;
  /** This node sends an embedder key (ARKIVECTOR_EMBEDDER_KEY). */
  embedderKey: boolean;
}

export interface StdioServerEntry {
  command: string;
  args: string[];
  env?: Record<string, string>;
}

/** The placeholders of the `env` block (never a secret). */
export const KEY_PLACEHOLDER = '0x…';
export const EMBEDDER_KEY_PLACEHOLDER = 'sk-…';

/** Embedder paths that carry nothing secret (`/v1`, `/v1/embeddings`…): shown as they are. */
const PLAIN_EMBEDDER_PATH = /^(\/v1)?(\/embeddings)?\/?$/;

/** A URL for a snippet: as given when it carries nothing secret, else redacted (and `redacted` says so). */
function shown(url: string, plainPath: RegExp): { url: string; redacted: boolean } {
  try {
    const parsed = new URL(url);
    if (!parsed.username && !parsed.password && !parsed.search && !parsed.hash && plainPath.test(parsed.pathname))
      return { url: `${parsed.origin}${parsed.pathname.replace(/\/$/, '')}`, redacted: false };
  } catch {
    // An invalid URL is shown redacted ('<invalid url>').
  }
  return { url: redactUrl(url), redacted: true };
}

/**
 * The entry for `command` (with `prefix` arguments before `serve`), and whether a URL in it lost its
 * credentials or path (the user must put the full URL in).
 * @example stdioServerEntry({ rpc: 'http://127.0.0.1:8545', signer: true, embedderKey: false }, 'arkivector')
 */
export function stdioServerEntry(
  facts: StdioFacts,
  command: string,
  prefix: string[] = [],
): { entry: StdioServerEntry; redacted: boolean } {
  const rpc = shown(facts.rpc, /^\/?$/);
  const embedder = facts.embedder ? shown(facts.embedder.url, PLAIN_EMBEDDER_PATH) : undefined;
  const args = [...prefix, 'serve', '--stdio', '--rpc', rpc.url];
  if (facts.embedder && embedder) args.push('--embedder', embedder.url, '--embedder-model', facts.embedder.model);
  const env: Record<string, string> = {};
  if (facts.signer) env.ARKIVECTOR_PRIVATE_KEY = KEY_PLACEHOLDER;
  if (facts.embedder && facts.embedderKey) env.ARKIVECTOR_EMBEDDER_KEY = EMBEDDER_KEY_PLACEHOLDER;
  return {
    entry: { command, args, ...(Object.keys(env).length ? { env } : {}) },
    redacted: rpc.redacted || embedder?.redacted === true,
  };
}
