// A tiny but real sentence-embedding model folder, written at test time (no model weights ship with any
// package): the layout of sentence-transformers' ONNX exports (`onnx/model.onnx` taking input_ids,
// attention_mask and token_type_ids and answering last_hidden_state; a WordPiece `tokenizer.json`;
// `tokenizer_config.json`; `config.json`), loaded by the same code that loads all-MiniLM-L6-v2. The model
// is a token-embedding lookup (BERT's word + token-type embeddings, no attention layers): mean pooling then
// makes a text's vector the average of its words'. The embedding table puts words of one topic on one
// axis, so texts about the same thing are near and the ranking of a search can be asserted.
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Topic words: each topic is one axis of the embedding space. */
export const TINY_TOPICS: Readonly<Record<string, readonly string[]>> = {
  pets: ['cat', 'cats', 'kitten', 'miso', 'purr', 'pet', 'pets', 'dog'],
  plants: ['fern', 'plant', 'plants', 'water', 'garden', 'sunday'],
  work: ['work', 'works', 'job', 'translator', 'office'],
  food: ['tuna', 'food', 'eat', 'likes'],
};
const FILLER = ['the', 'user', 'has', 'a', 'called', 'every', 'as', 'what', 'is', 'my', 'name', 's', "'", '?', '.'];
const SPECIAL = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];
/** Embedding width: one axis per topic, three for per-word detail, one shared by filler words. */
export const TINY_DIM = 8;

// --- a minimal protobuf writer (the ONNX format is protobuf; field numbers from onnx.proto3) ---
type Field = Buffer;
const varint = (value: number | bigint): Buffer => {
  let v = BigInt(value);
  const out: number[] = [];
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) byte |= 0x80;
    out.push(byte);
  } while (v > 0n);
  return Buffer.from(out);
};
const key = (field: number, wire: number) => varint((field << 3) | wire);
const int = (field: number, value: number): Field => Buffer.concat([key(field, 0), varint(value)]);
const bytes = (field: number, value: Buffer | string): Field => {
  const body = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
  return Buffer.concat([key(field, 2), varint(body.length), body]);
};
const message = (field: number, ...parts: Field[]): Field => bytes(field, Buffer.concat(parts));

const FLOAT = 1;
const INT64 = 7;

/** TensorProto: dims (1), data_type (2), name (8), raw_data (9). */
const tensor = (field: number, name: string, dims: number[], values: Float32Array) =>
  message(field, ...dims.map((d) => int(1, d)), int(2, FLOAT), bytes(8, name), bytes(9, Buffer.from(values.buffer)));

/** ValueInfoProto: name (1), type (2) → TypeProto.tensor_type (1) → elem_type (1), shape (2) → dim (1). */
const valueInfo = (field: number, name: string, elemType: number, dims: string[]) =>
  message(
    field,
    bytes(1, name),
    message(2, message(1, int(1, elemType), message(2, ...dims.map((d) => message(1, bytes(2, d)))))),
  );

/** NodeProto: input (1), output (2), name (3), op_type (4). */
const node = (inputs: string[], outputs: string[], name: string, op: string) =>
  message(1, ...inputs.map((i) => bytes(1, i)), ...outputs.map((o) => bytes(2, o)), bytes(3, name), bytes(4, op));

/** The vocabulary in id order. */
export function tinyVocabulary(): string[] {
  return [...SPECIAL, ...Object.values(TINY_TOPICS).flat(), ...FILLER];
}

/** The embedding of one vocabulary word (row of the word-embedding table). */
export function tinyWordVector(word: string): number[] {
  const vector = new Array<number>(TINY_DIM).fill(0);
  const topic = Object.values(TINY_TOPICS).findIndex((words) => words.includes(word));
  // Per-word detail, small beside the topic axis, so that no two words are the same vector.
  const h = createHash('sha256').update(word).digest();
  for (let d = 4; d < 7; d++) vector[d] = ((h[d] ?? 0) / 255 - 0.5) * 0.1;
  if (topic >= 0) vector[topic] = 1;
  else vector[7] = 0.3;
  return vector;
}

/** ModelProto bytes: ir_version (1), producer_name (2), graph (7), opset_import (8). */
export function tinyOnnxModel(): Buffer {
  const vocabulary = tinyVocabulary();
  const words = new Float32Array(vocabulary.length * TINY_DIM);
  for (const [row, word] of vocabulary.entries()) words.set(tinyWordVector(word), row * TINY_DIM);
  const types = new Float32Array(2 * TINY_DIM);
  const shape = ['batch_size', 'sequence_length'];
  const graph = message(
    7,
    node(['embeddings.word_embeddings.weight', 'input_ids'], ['words'], 'word_lookup', 'Gather'),
    node(['embeddings.token_type_embeddings.weight', 'token_type_ids'], ['types'], 'type_lookup', 'Gather'),
    node(['words', 'types'], ['last_hidden_state'], 'sum', 'Add'),
    bytes(2, 'tiny-bert'),
    tensor(5, 'embeddings.word_embeddings.weight', [vocabulary.length, TINY_DIM], words),
    tensor(5, 'embeddings.token_type_embeddings.weight', [2, TINY_DIM], types),
    valueInfo(11, 'input_ids', INT64, shape),
    valueInfo(11, 'attention_mask', INT64, shape),
    valueInfo(11, 'token_type_ids', INT64, shape),
    valueInfo(12, 'last_hidden_state', FLOAT, [...shape, String(TINY_DIM)]),
  );
  return Buffer.concat([int(1, 8), bytes(2, 'arkivector-test'), graph, message(8, bytes(1, ''), int(2, 14))]);
}

/** The folder's files by path in the model repository. */
export function tinyModelFiles(): Record<string, Buffer> {
  const vocabulary = tinyVocabulary();
  const special = (content: string, id: number) => ({
    id,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  });
  const template = (id: string) => ({ id, ids: [vocabulary.indexOf(id)], tokens: [id] });
  const tokenizer = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIAL.map((s, i) => special(s, i)),
    normalizer: {
      type: 'BertNormalizer',
      clean_text: true,
      handle_chinese_chars: true,
      strip_accents: null,
      lowercase: true,
    },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
      ],
      pair: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
        { Sequence: { id: 'B', type_id: 1 } },
        { SpecialToken: { id: '[SEP]', type_id: 1 } },
      ],
      special_tokens: { '[CLS]': template('[CLS]'), '[SEP]': template('[SEP]') },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: {
      type: 'WordPiece',
      unk_token: '[UNK]',
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
      vocab: Object.fromEntries(vocabulary.map((word, id) => [word, id])),
    },
  };
  const tokenizerConfig = {
    tokenizer_class: 'BertTokenizer',
    do_lower_case: true,
    model_max_length: 512,
    cls_token: '[CLS]',
    sep_token: '[SEP]',
    pad_token: '[PAD]',
    unk_token: '[UNK]',
    mask_token: '[MASK]',
    clean_up_tokenization_spaces: true,
  };
  const config = {
    architectures: ['BertModel'],
    model_type: 'bert',
    hidden_size: TINY_DIM,
    num_hidden_layers: 0,
    vocab_size: vocabulary.length,
    type_vocab_size: 2,
    max_position_embeddings: 512,
    pad_token_id: 0,
  };
  const json = (value: object) => Buffer.from(`${JSON.stringify(value, null, 2)}\n`);
  return {
    'onnx/model.onnx': tinyOnnxModel(),
    'tokenizer.json': json(tokenizer),
    'tokenizer_config.json': json(tokenizerConfig),
    'config.json': json(config),
    'special_tokens_map.json': json({ cls_token: '[CLS]', sep_token: '[SEP]', pad_token: '[PAD]', unk_token: '[UNK]' }),
  };
}

/** sha256 (hex) of each file, as a catalog entry pins them. */
export const tinyModelHashes = (files = tinyModelFiles()): Record<string, string> =>
  Object.fromEntries(
    Object.entries(files).map(([path, body]) => [path, createHash('sha256').update(body).digest('hex')]),
  );

/** Writes the model folder at `dir` (created); returns `dir`. */
export async function writeTinyModel(dir: string): Promise<string> {
  for (const [path, body] of Object.entries(tinyModelFiles())) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), body);
  }
  return dir;
}

/** What the model computes for a text, by the same rule (mean of its tokens' rows, normalised). */
export function tinyExpectedVector(tokens: string[]): number[] {
  const sum = new Array<number>(TINY_DIM).fill(0);
  for (const token of ['[CLS]', ...tokens, '[SEP]'])
    for (const [d, x] of tinyWordVector(token).entries()) sum[d] = (sum[d] ?? 0) + x;
  const norm = Math.hypot(...sum);
  return sum.map((x) => x / norm);
}
