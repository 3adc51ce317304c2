// A loopback stand-in for the OpenAI embeddings API (`POST /v1/embeddings`), faithful to its published
// shapes: `{model, input: string | string[], encoding_format?: "float" | "base64"}` →
// `{object: "list", data: [{object: "embedding", index, embedding}], model, usage}`; errors are
// `{error: {message, type, param, code}}` with OpenAI's statuses (400 bad request, 401 bad key, 404 unknown
// model, 429 with `Retry-After`). Tests script faults (429, 5xx, garbage, dropped connections, silence)
// and read back every request it received.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** The demo's 4-d space: cats near [1,0,0,0], plants near the fern, everything else in the middle. */
export function wordEmbedding(text: string): number[] {
  return /cat|purr/i.test(text) ? [1, 0, 0, 0] : /fern|plant/i.test(text) ? [0, 0.1, 1, 0.2] : [0.5, 0.5, 0.5, 0.5];
}

/** A deterministic unit-free vector of `dim` numbers for any text (FNV-1a seeded), for dimension tests. */
export function hashedEmbedding(text: string, dim: number): number[] {
  let h = 0x811c9dc5;
  for (const ch of text) h = Math.imul(h ^ (ch.codePointAt(0) ?? 0), 0x01000193) >>> 0;
  const out: number[] = [];
  for (let i = 0; i < dim; i++) {
    h = Math.imul(h ^ i, 0x01000193) >>> 0;
    out.push((h % 2001) / 1000 - 1);
  }
  return out;
}

export type Fault =
  | { status: number; retryAfter?: string; body?: string }
  | { garbage: string }
  | { drop: true }
  | { silent: true };

export interface RecordedRequest {
  method: string;
  path: string;
  authorization?: string;
  body: unknown;
}

export interface EmbedderFixtureOptions {
  /** Models served and how they embed; default: any model name, embedded with wordEmbedding. */
  models?: Record<string, (text: string) => number[]>;
  /** Accepted `Authorization` header values (`Bearer k`, `Basic …`); default: no auth. */
  authorizations?: string[];
  /** Most inputs per request (OpenAI: 2048); more is a 400. */
  maxInputs?: number;
  /** Answer `data` in reverse order (servers may; clients must use `index`). */
  reverse?: boolean;
}

export interface EmbedderFixture {
  /** Base URL, `http://127.0.0.1:PORT/v1`. */
  url: string;
  server: Server;
  requests: RecordedRequest[];
  /** Consumed one per request, before the request is served. */
  faults: Fault[];
  close(): Promise<void>;
}

const openAiError = (res: ServerResponse, status: number, message: string, type: string, code: string | null) =>
  res
    .writeHead(status, { 'content-type': 'application/json' })
    .end(JSON.stringify({ error: { message, type, param: null, code } }));

export async function startEmbedder(options: EmbedderFixtureOptions = {}): Promise<EmbedderFixture> {
  const requests: RecordedRequest[] = [];
  const faults: Fault[] = [];
  const sockets = new Set<Socket>();
  const serve = (req: IncomingMessage, res: ServerResponse, raw: string) => {
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      body = raw;
    }
    requests.push({ method: req.method ?? '', path: req.url ?? '', authorization: req.headers.authorization, body });
    const fault = faults.shift();
    if (fault) {
      if ('drop' in fault) return req.socket.destroy();
      if ('silent' in fault) return;
      if ('garbage' in fault) return res.writeHead(200, { 'content-type': 'application/json' }).end(fault.garbage);
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (fault.retryAfter !== undefined) headers['retry-after'] = fault.retryAfter;
      return res.writeHead(fault.status, headers).end(
        fault.body ??
          JSON.stringify({
            error: {
              message: fault.status === 429 ? 'Rate limit reached' : 'The server had an error',
              type: fault.status === 429 ? 'requests' : 'server_error',
              param: null,
              code: fault.status === 429 ? 'rate_limit_exceeded' : null,
            },
          }),
      );
    }
    if (req.method !== 'POST' || req.url !== '/v1/embeddings')
      return openAiError(res, 404, `Invalid URL (${req.method} ${req.url})`, 'invalid_request_error', null);
    if (options.authorizations && !options.authorizations.includes(req.headers.authorization ?? ''))
      return openAiError(res, 401, 'Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key');
    const { model, input, encoding_format } = (body ?? {}) as Record<string, unknown>;
    if (typeof model !== 'string')
      return openAiError(res, 400, 'you must provide a model parameter', 'invalid_request_error', null);
    const embed = options.models ? options.models[model] : wordEmbedding;
    if (!embed)
      return openAiError(res, 404, `The model \`${model}\` does not exist`, 'invalid_request_error', 'model_not_found');
    const inputs = typeof input === 'string' ? [input] : input;
    if (!Array.isArray(inputs) || inputs.length === 0 || !inputs.every((i) => typeof i === 'string' && i !== ''))
      return openAiError(
        res,
        400,
        "'input' must be a non-empty string or array of strings",
        'invalid_request_error',
        null,
      );
    if (inputs.length > (options.maxInputs ?? 2048))
      return openAiError(res, 400, `too many inputs: ${inputs.length}`, 'invalid_request_error', null);
    if (encoding_format !== undefined && encoding_format !== 'float' && encoding_format !== 'base64')
      return openAiError(res, 400, "encoding_format must be 'float' or 'base64'", 'invalid_request_error', null);
    const data = (inputs as string[]).map((text, index) => {
      const vector = embed(text);
      const embedding =
        encoding_format === 'base64' ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector;
      return { object: 'embedding', index, embedding };
    });
    if (options.reverse) data.reverse();
    const tokens = (inputs as string[]).reduce((sum, text) => sum + text.split(/\s+/).length, 0);
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ object: 'list', data, model, usage: { prompt_tokens: tokens, total_tokens: tokens } }));
  };
  const server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (raw += chunk));
    req.on('end', () => serve(req, res, raw));
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    server,
    requests,
    faults,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
