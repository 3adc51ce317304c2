// What a failed local model says: its cause in words, how long the node leaves it alone (a failure that
// another try cannot fix is not retried at every text call), and every way out, with the paths and names
// that apply to this node.
import { INSTALL_COMMANDS } from '../../packageInfo.ts';
import type { LocalModelRef } from './catalog.ts';
import type { ModelFailureCause } from './modelCache.ts';

/**
 * A failed model's cause: a fetch's, or `not_cached` (fetching off), `not_a_folder`, `invalid` (does not
 * load), `no_runtime` (the optional packages that run a model are not installed).
 */
export type LocalFailureCause = ModelFailureCause | 'not_cached' | 'not_a_folder' | 'no_runtime';

/** Words for each cause, put before the detail. */
const CAUSE_WORDS: Record<LocalFailureCause, string> = {
  unreachable: 'the model hub cannot be reached',
  refused: 'the model hub refused the file',
  too_large: 'a model file is larger than allowed',
  hash_mismatch: "a model file's sha256 is not the pinned one",
  stalled: 'the transfer from the model hub stalled',
  invalid: 'the model does not load',
  not_cached: 'the model is not in the cache and fetching is off',
  not_a_folder: 'the folder holds no model',
  no_runtime: 'the packages that run a local model are not installed',
};

/** Causes another try may fix by itself (the network, the hub's mood); the rest wait for the user. */
const TRANSIENT: ReadonlySet<LocalFailureCause> = new Set(['unreachable', 'stalled', 'refused']);

/** First wait after a transient failure; it doubles per failure up to LOCAL_RETRY_MAX_MS. */
export const LOCAL_RETRY_AFTER_MS = 30_000;
/** The longest wait between two tries, and the wait after a failure another try cannot fix. */
export const LOCAL_RETRY_MAX_MS = 60 * 60_000;

/** How long to leave the model alone after the `failures`-th failure in a row of this cause. */
export function retryDelayMs(cause: LocalFailureCause, failures: number, firstMs = LOCAL_RETRY_AFTER_MS): number {
  if (!TRANSIENT.has(cause)) return Math.max(firstMs, LOCAL_RETRY_MAX_MS);
  return Math.min(firstMs * 2 ** Math.max(0, failures - 1), Math.max(firstMs, LOCAL_RETRY_MAX_MS));
}

/** The optional packages a local model runs on, loaded by the model's worker only. */
export const LOCAL_RUNTIME_PACKAGES = ['onnxruntime-node', '@huggingface/tokenizers'] as const;

/** Every way to text that does not need this model to load here. */
export function waysOut(ref: LocalModelRef, cacheFolder: string | undefined, cause?: LocalFailureCause): string {
  const ways =
    cause === 'no_runtime'
      ? [
          `install arkivector again with its optional dependencies (${LOCAL_RUNTIME_PACKAGES.join(', ')}): in a checkout "npm install", for the command "ONNXRUNTIME_NODE_INSTALL=skip ${INSTALL_COMMANDS.at(-1)}" (the variable skips the runtime's CUDA download, the step that fails without access beyond the npm registry); then restart the node`,
        ]
      : ref.kind === 'path'
        ? [`put the model's files in ${ref.path} (onnx/model.onnx, tokenizer.json, tokenizer_config.json, config.json)`]
        : [
            `run "arkivector model pull ${ref.model.name}" on a machine that reaches the hub and copy the folder it prints to ${cacheFolder} here (used at the next text call, no restart)`,
            '--embedder local:PATH with a model folder you have',
            '--model-hub URL for a mirror',
          ];
  return `Ways out: ${[
    ...ways,
    '--embedder URL --embedder-model NAME for an embeddings server (Ollama, TEI, OpenAI)',
    'mode "keyword" (BM25 over documents), which needs no embedder and works now',
  ].join('; ')}.`;
}

/** The cause in words with its detail. */
export const describeCause = (cause: LocalFailureCause, detail: string): string => `${CAUSE_WORDS[cause]}: ${detail}`;
