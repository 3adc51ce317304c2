// The MCP client entry (`mcpServers.arkivector`) for a stdio node against the same chain as this node: one
// source for the start banner and the console's Connect page, so both carry the same flags (the RPC, the
// embedder and its model) and the same `env` block (the signer key, the embedder key), as placeholders.
import {
  DEFAULT_LOCAL_MODEL,
  type LocalModelRef,
  MODEL_HUB_DEFAULT,
  parseLocalModel,
} from './embedder/local/catalog.ts';
import type { ServeConfig } from './config.ts';
import { redactUrl } from './redactUrl.ts';

/** What a stdio node needs to match this one; URLs as given (they are shown redacted where needed). */
export interface StdioFacts {
  rpc: string;
  embedder?: { url: string; model: string };
  /** The local model (`--embedder local[:…]`) when no endpoint is given, or `none` (`--embedder none`); unset: the default model. */
  local?: LocalModelRef | 'none';
  /** The hub local models come from (`--model-hub`). */
  modelHub?: string;
  /** `--compat kuradb`: the stdio node lists KuraDB's tools too. */
  compat?: 'kuradb';
  /** This node signs: the stdio node needs a key too, or it is read-only. */
  signer: boolean;
  /** This node sends an embedder key (ARKIVECTOR_EMBEDDER_KEY). */
  embedderKey: boolean;
}

/** The facts of a node started with `config` against `rpc`. */
export function stdioFacts(
  config: Pick<ServeConfig, 'embedder' | 'localEmbedder' | 'modelHub' | 'compat'>,
  rpc: string,
  signer: boolean,
  embedderKey: boolean,
): StdioFacts {
  return {
    rpc,
    embedder: config.embedder,
    local: config.embedder ? undefined : (config.localEmbedder ?? 'none'),
    modelHub: config.modelHub,
    compat: config.compat,
    signer,
    embedderKey,
  };
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
  else args.push(...localArgs(facts.local));
  // Security: a mirror's URL may carry credentials; `off` is no URL.
  const hub =
    !facts.embedder &&
    facts.local !== 'none' &&
    facts.local?.kind !== 'path' &&
    facts.modelHub !== undefined &&
    facts.modelHub !== MODEL_HUB_DEFAULT
      ? facts.modelHub === 'off'
        ? { url: 'off', redacted: false }
        : shown(facts.modelHub, /^(\/[\w.-]+)*\/?$/)
      : undefined;
  if (hub) args.push('--model-hub', hub.url);
  if (facts.compat) args.push('--compat', facts.compat);
  const env: Record<string, string> = {};
  if (facts.signer) env.ARKIVECTOR_PRIVATE_KEY = KEY_PLACEHOLDER;
  if (facts.embedder && facts.embedderKey) env.ARKIVECTOR_EMBEDDER_KEY = EMBEDDER_KEY_PLACEHOLDER;
  return {
    entry: { command, args, ...(Object.keys(env).length ? { env } : {}) },
    redacted: rpc.redacted || embedder?.redacted === true || hub?.redacted === true,
  };
}

/**
 * The flags naming this node's local model (none for the default model), so the stdio node embeds with the
 * same model and records the same name; `--embedder none` when the node has no embedder.
 */
function localArgs(ref: LocalModelRef | 'none' | undefined): string[] {
  if (ref === undefined) return [];
  if (ref === 'none') return ['--embedder', 'none'];
  if (ref.kind === 'path') {
    const plain = parseLocalModel(ref.path);
    const renamed = plain.kind !== 'path' || plain.name !== ref.name;
    return ['--embedder', `local:${ref.path}`, ...(renamed ? ['--embedder-model', ref.name] : [])];
  }
  // The catalog's short name when it names this repository, else the repository itself.
  const spec = catalogRepo(ref.model.name) === ref.model.repo ? ref.model.name : ref.model.repo;
  const recorded = parseLocalModel(spec);
  const name = recorded.kind === 'hub' ? recorded.model.name : undefined;
  if (spec === DEFAULT_LOCAL_MODEL && name === ref.model.name) return [];
  return ['--embedder', `local:${spec}`, ...(name !== ref.model.name ? ['--embedder-model', ref.model.name] : [])];
}

/** The repository a `local:` name resolves to (undefined: not a model name). */
function catalogRepo(spec: string): string | undefined {
  try {
    const ref = parseLocalModel(spec);
    return ref.kind === 'hub' ? ref.model.repo : undefined;
  } catch {
    return undefined;
  }
}
