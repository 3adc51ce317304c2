// Which model `--embedder local[:…]` means: a catalog entry (pinned hub revision, a sha256 per file), any
// other hub repository (ORG/NAME, at `main`, hashes recorded on first fetch), or a folder on disk (no
// download, no hash check). Pure data and parsing: nothing here touches the disk or the network.
import { homedir } from 'node:os';
import { basename, resolve } from 'node:path';

/** The hub models come from unless --model-hub (ARKIVECTOR_MODEL_HUB) says otherwise. */
export const MODEL_HUB_DEFAULT = 'https://huggingface.co';

/** The model a node without `--embedder` runs: the name the peers (Qdrant MCP, Chroma) record too. */
export const DEFAULT_LOCAL_MODEL = 'all-MiniLM-L6-v2';

/** Files every model folder needs (`onnx/model.onnx` is the sentence-transformers ONNX export's path). */
export const MODEL_FILES = ['onnx/model.onnx', 'tokenizer.json', 'tokenizer_config.json', 'config.json'] as const;

export interface CatalogModel {
  /** The name recorded in a collection's `embedder.model`. */
  readonly name: string;
  /** Hub repository, ORG/NAME. */
  readonly repo: string;
  /** Commit of the repository the files are fetched at. */
  readonly revision: string;
  /** Path in the repository → sha256 (hex); undefined: not known here, recorded on the first fetch. */
  readonly files: Readonly<Record<string, string | undefined>>;
  readonly dim?: number;
  /** Tokens per text (longer texts are cut): sentence-transformers' `max_seq_length`. */
  readonly maxTokens: number;
  /** Put before a search text and before a stored document (e5: "query: ", "passage: "). */
  readonly queryPrefix: string;
  readonly passagePrefix: string;
}

// Hashes: the hub's LFS sha256 of each file at the revision, as published by two independent projects
// pinning this revision (model.onnx and tokenizer.json) or one (the three small JSON files); never fetched
// from here (no hub access on the build machine). See docs/embedders.md, "Local embedder".
const CATALOG: readonly CatalogModel[] = [
  {
    name: 'all-MiniLM-L6-v2',
    repo: 'sentence-transformers/all-MiniLM-L6-v2',
    revision: 'c9745ed1d9f207416be6d2e6f8de32d1f16199bf',
    files: {
      'onnx/model.onnx': '6fd5d72fe4589f189f8ebc006442dbb529bb7ce38f8082112682524616046452',
      'tokenizer.json': 'be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037',
      'config.json': '953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41',
      'tokenizer_config.json': 'acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b',
      'special_tokens_map.json': '303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3',
    },
    dim: 384,
    maxTokens: 256,
    queryPrefix: '',
    passagePrefix: '',
  },
  {
    // The multilingual choice (CJK among ~100 languages). Revision and the JSON files' hashes from one
    // public pin; the ONNX file's hash was not found, so it is recorded on the first fetch.
    name: 'multilingual-e5-small',
    repo: 'intfloat/multilingual-e5-small',
    revision: '614241f622f53c4eeff9890bdc4f31cfecc418b3',
    files: {
      'onnx/model.onnx': undefined,
      'tokenizer.json': '0b44a9d7b51c3c62626640cda0e2c2f70fdacdc25bbbd68038369d14ebdf4c39',
      'config.json': '69137736cab8b8903a07fe8afaafdda25aac55415a12a55d1bffa9f581abf959',
      'tokenizer_config.json': 'a1d6bc8734a6f635dc158508bef000f8e2e5a759c7d92f984b2c86e5ff53425b',
      'special_tokens_map.json': 'd05497f1da52c5e09554c0cd874037a083e1dc1b9cfd48034d1c717f1afc07a7',
    },
    dim: 384,
    maxTokens: 512,
    queryPrefix: 'query: ',
    passagePrefix: 'passage: ',
  },
];

/** What `--embedder local[:…]` names. */
export type LocalModelRef =
  | { kind: 'hub'; model: CatalogModel }
  | { kind: 'path'; path: string; name: string; maxTokens: number; queryPrefix: string; passagePrefix: string };

/** The e5 family wants its prefixes; any other hub model gets none. */
function prefixesFor(repo: string): { queryPrefix: string; passagePrefix: string } {
  return /(^|[/-])e5-/i.test(repo)
    ? { queryPrefix: 'query: ', passagePrefix: 'passage: ' }
    : { queryPrefix: '', passagePrefix: '' };
}

export const catalogNames = (): string[] => CATALOG.map((m) => m.name);

/**
 * `SPEC` of `local:SPEC` (empty: the default): a path (starts with /, ./, ../ or ~), a catalog name, or
 * ORG/NAME on the hub.
 * @param name the name to record, for a folder (default: the folder's name)
 * @throws Error with a message for the user
 */
export function parseLocalModel(spec: string, name?: string): LocalModelRef {
  const wanted = spec === '' ? DEFAULT_LOCAL_MODEL : spec;
  if (/^(\/|\.\.?\/|~(\/|$))/.test(wanted)) {
    const path = wanted.startsWith('~') ? resolve(homedir(), wanted.slice(2)) : resolve(wanted);
    return {
      kind: 'path',
      path,
      name: name ?? basename(path),
      maxTokens: 512,
      ...prefixesFor(name ?? basename(path)),
    };
  }
  const known = CATALOG.find((m) => m.name === wanted || m.repo === wanted);
  if (known) return { kind: 'hub', model: name ? { ...known, name } : known };
  // Dot-only segments are refused: `ORG/..` would fetch another path of the hub (URLs resolve them).
  if (!/^[\w.-]+\/[\w.-]+$/.test(wanted) || wanted.split('/').some((segment) => /^\.+$/.test(segment)))
    throw new Error(
      `local:${spec}: a model is ORG/NAME on the hub, one of ${catalogNames().join(', ')}, or a folder path (starting with /, ./ or ~)`,
    );
  return {
    kind: 'hub',
    model: {
      name: name ?? wanted,
      repo: wanted,
      revision: 'main',
      files: { ...Object.fromEntries(MODEL_FILES.map((f) => [f, undefined])) },
      maxTokens: 512,
      ...prefixesFor(wanted),
    },
  };
}

/** The recorded model name of a reference. */
export const modelName = (ref: LocalModelRef): string => (ref.kind === 'hub' ? ref.model.name : ref.name);
