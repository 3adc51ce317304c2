// The local embedder's worker thread: onnxruntime-node's session.run blocks its thread for a whole batch,
// so tokenising, the model and pooling all run here, off the node's event loop. Tokenised with
// @huggingface/tokenizers, cut to the model's token limit, padded per batch, mean-pooled over the
// attention mask and L2-normalised: what transformers.js' feature-extraction pipeline computes
// (`pooling: 'mean', normalize: true`). Both libraries are optional dependencies, imported here only.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';

export interface EmbedWorkerData {
  folder: string;
  maxTokens: number;
  threads: number;
}
export type EmbedRequest = { id: number; texts: string[] };
export type EmbedReply =
  | { ready: { dim: number } }
  | { fatal: string }
  | { id: number; vectors: Float32Array; dim: number }
  | { id: number; error: string };

type Tensor = { data: ArrayLike<number>; dims: readonly number[] };
type Session = {
  inputNames: readonly string[];
  outputNames: readonly string[];
  run(feeds: Record<string, unknown>): Promise<Record<string, Tensor>>;
};
type Ort = {
  InferenceSession: { create(path: string, options: object): Promise<Session> };
  Tensor: new (type: 'int64', data: BigInt64Array, dims: number[]) => unknown;
};
type Encoding = { ids: number[]; attention_mask: number[]; token_type_ids?: number[] };
type Tokenizer = {
  encode(text: string, options: { return_token_type_ids: boolean }): Encoding;
  token_to_id(token: string): number | undefined;
};

const port = parentPort;
const OPTIONAL = { runtime: 'onnxruntime-node', tokenizers: '@huggingface/tokenizers' };

/** Loads the model of `data.folder`: a function embedding one padded batch. */
export async function loadEmbedder(
  data: EmbedWorkerData,
): Promise<(texts: string[]) => Promise<{ vectors: Float32Array; dim: number }>> {
  let ort: Ort;
  let TokenizerClass: new (json: object, config: object) => Tokenizer;
  try {
    // Named by a variable: the type checker must not need them either (npm install --omit=optional).
    // CommonJS: the runtime's exports are the namespace itself under some loaders, `default` under others.
    const mod = (await import(OPTIONAL.runtime)) as Ort & { default?: Ort };
    ort = mod.default?.InferenceSession ? mod.default : mod;
    ({ Tokenizer: TokenizerClass } = (await import(OPTIONAL.tokenizers)) as { Tokenizer: typeof TokenizerClass });
  } catch (error) {
    throw new Error(
      `the local embedder needs the optional dependencies onnxruntime-node and @huggingface/tokenizers (${(error as Error).message}); install them, or run with --embedder URL or --embedder none`,
    );
  }
  const json = async (file: string) => JSON.parse(await readFile(join(data.folder, file), 'utf8')) as object;
  const tokenizerConfig = (await json('tokenizer_config.json')) as { model_max_length?: number; pad_token?: string };
  const tokenizer = new TokenizerClass(await json('tokenizer.json'), tokenizerConfig);
  const session = await ort.InferenceSession.create(join(data.folder, 'onnx', 'model.onnx'), {
    intraOpNumThreads: data.threads,
    interOpNumThreads: 1,
    executionProviders: ['cpu'],
  });
  const limit = Math.min(data.maxTokens, tokenizerConfig.model_max_length ?? data.maxTokens);
  const padId = (tokenizerConfig.pad_token && tokenizer.token_to_id(tokenizerConfig.pad_token)) ?? 0;
  const output = session.outputNames.includes('last_hidden_state') ? 'last_hidden_state' : session.outputNames[0];
  if (!output) throw new Error('the model has no output');

  return async (texts) => {
    const encodings = texts.map((text) => {
      const e = tokenizer.encode(text, { return_token_type_ids: true });
      if (e.ids.length <= limit) return e;
      // Cut as the tokenizer's truncation does: keep the first tokens and the closing special token.
      const cut = (list: number[]) => [...list.slice(0, limit - 1), list[list.length - 1] ?? 0];
      return {
        ids: cut(e.ids),
        attention_mask: cut(e.attention_mask),
        token_type_ids: e.token_type_ids && cut(e.token_type_ids),
      };
    });
    const rows = texts.length;
    const cols = Math.max(1, ...encodings.map((e) => e.ids.length));
    const ids = new BigInt64Array(rows * cols).fill(BigInt(padId));
    const mask = new BigInt64Array(rows * cols);
    const types = new BigInt64Array(rows * cols);
    encodings.forEach((e, r) => {
      for (let c = 0; c < e.ids.length; c++) {
        ids[r * cols + c] = BigInt(e.ids[c] ?? padId);
        mask[r * cols + c] = BigInt(e.attention_mask[c] ?? 0);
        types[r * cols + c] = BigInt(e.token_type_ids?.[c] ?? 0);
      }
    });
    const all: Record<string, BigInt64Array> = { input_ids: ids, attention_mask: mask, token_type_ids: types };
    const feeds: Record<string, unknown> = {};
    for (const name of session.inputNames) {
      const values = all[name];
      if (!values) throw new Error(`the model wants an input ${name} this embedder does not make`);
      feeds[name] = new ort.Tensor('int64', values, [rows, cols]);
    }
    const result = (await session.run(feeds))[output];
    if (!result) throw new Error(`the model answered no ${output}`);
    return pool(result, mask, rows, cols);
  };
}

/** Mean over the tokens the mask keeps (or the model's own sentence vector), L2-normalised. */
function pool(result: Tensor, mask: BigInt64Array, rows: number, cols: number) {
  const hidden = result.data;
  const dim = result.dims[result.dims.length - 1] ?? 0;
  const vectors = new Float32Array(rows * dim);
  const sum = new Float64Array(dim);
  for (let r = 0; r < rows; r++) {
    sum.fill(0);
    if (result.dims.length === 2) {
      for (let d = 0; d < dim; d++) sum[d] = hidden[r * dim + d] ?? 0;
    } else {
      let kept = 0;
      for (let c = 0; c < cols; c++) {
        if (mask[r * cols + c] === 0n) continue;
        kept++;
        const at = (r * cols + c) * dim;
        for (let d = 0; d < dim; d++) sum[d] = (sum[d] ?? 0) + (hidden[at + d] ?? 0);
      }
      for (let d = 0; d < dim; d++) sum[d] = (sum[d] ?? 0) / Math.max(kept, 1e-9);
    }
    let norm = 0;
    for (let d = 0; d < dim; d++) norm += (sum[d] ?? 0) ** 2;
    norm = Math.max(Math.sqrt(norm), 1e-12);
    for (let d = 0; d < dim; d++) vectors[r * dim + d] = (sum[d] ?? 0) / norm;
  }
  return { vectors, dim };
}

if (port) {
  loadEmbedder(workerData as EmbedWorkerData).then(
    async (embed) => {
      // The dimension, from one embedding (config.json's hidden_size is not always the output's size).
      const probe = await embed(['arkivector']);
      port.postMessage({ ready: { dim: probe.dim } } satisfies EmbedReply);
      port.on('message', async ({ id, texts }: EmbedRequest) => {
        try {
          const { vectors, dim } = await embed(texts);
          port.postMessage({ id, vectors, dim } satisfies EmbedReply, [vectors.buffer as ArrayBuffer]);
        } catch (error) {
          port.postMessage({ id, error: (error as Error).message } satisfies EmbedReply);
        }
      });
    },
    (error: Error) => port.postMessage({ fatal: error.message } satisfies EmbedReply),
  );
}
