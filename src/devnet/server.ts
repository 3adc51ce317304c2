// JSON-RPC 2.0 transport of the devnet: HTTP POST (single and batch) and WebSocket with eth_subscribe
// (newHeads, logs). All parsing of the envelope happens here; methods live in node.ts.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { numberToHex } from 'viem';
import { HTTP_KEEP_ALIVE_TIMEOUT_MS } from '../httpDefault.ts';
import { RpcError, type ChainBlock } from './transactions.ts';
import { formatBlock, formatLog } from './format.ts';
import { logMatches, readLogCriteria, type LogCriteria } from './logs.ts';
import type { DevnetNode } from './node.ts';

const MAX_BODY_BYTES = 64 * 1024 * 1024;

interface RpcRequest {
  jsonrpc?: unknown;
  id?: unknown;
  method?: unknown;
  params?: unknown;
}

/** JSON with bigint written as exact JSON numbers (the node writes uint64 fields as numbers). */
export function stringifyJson(value: unknown): string {
  return JSON.stringify(value, (_key, v) => (typeof v === 'bigint' ? `\u0000big${v}` : v)).replace(
    /"\\u0000big(\d+)"/g,
    '$1',
  );
}

const errorBody = (id: unknown, code: number, message: string, data?: unknown) => ({
  jsonrpc: '2.0',
  id: id ?? null,
  error: data === undefined ? { code, message } : { code, message, data },
});

type Subscriptions = Map<string, { kind: 'newHeads' } | { kind: 'logs'; criteria: LogCriteria }>;

export interface DevnetServer {
  readonly url: string;
  readonly wsUrl: string;
  readonly port: number;
  close(): Promise<void>;
}

export async function serveDevnet(node: DevnetNode, host: string, port: number): Promise<DevnetServer> {
  async function call(request: RpcRequest, subscriptions?: Subscriptions): Promise<object | undefined> {
    if (typeof request !== 'object' || request === null || typeof request.method !== 'string') {
      return errorBody(request?.id, -32600, 'invalid request');
    }
    const params = request.params === undefined ? [] : request.params;
    if (!Array.isArray(params)) return errorBody(request.id, -32602, 'invalid params: expected an array');
    try {
      let result: unknown;
      if (request.method === 'eth_subscribe' && subscriptions) result = subscribe(params, subscriptions);
      else if (request.method === 'eth_unsubscribe' && subscriptions) result = subscriptions.delete(String(params[0]));
      else result = await node.request(request.method, params);
      if (request.id === undefined) return undefined;
      return { jsonrpc: '2.0', id: request.id, result: result ?? null };
    } catch (error) {
      if (error instanceof RpcError) return errorBody(request.id, error.code, error.message, error.data);
      process.stderr.write(`devnet: internal error in ${request.method}: ${(error as Error).stack}\n`);
      return errorBody(request.id, -32603, `internal error: ${(error as Error).message}`);
    }
  }

  /**
   * The answer once every block it may depend on is on disk (a kept chain): no receipt, block number or
   * send result is answered for a block a crash could still lose.
   */
  async function handlePayload(text: string, subscriptions?: Subscriptions): Promise<string | undefined> {
    const answer = await answerPayload(text, subscriptions);
    try {
      await node.durable();
    } catch (error) {
      return stringifyJson(
        errorBody(null, -32603, `the devnet cannot write its state file: ${(error as Error).message}`),
      );
    }
    return answer;
  }

  async function answerPayload(text: string, subscriptions?: Subscriptions): Promise<string | undefined> {
    let payload: unknown;
    try {
      payload = JSON.parse(text);
    } catch {
      return stringifyJson(errorBody(null, -32700, 'parse error'));
    }
    if (Array.isArray(payload)) {
      if (payload.length === 0) return stringifyJson(errorBody(null, -32600, 'empty batch'));
      const answers = [];
      // Sequential on purpose: a batch of sends must be mined in the order given.
      for (const item of payload) {
        const answer = await call(item as RpcRequest, subscriptions);
        if (answer) answers.push(answer);
      }
      return answers.length ? stringifyJson(answers) : undefined;
    }
    const answer = await call(payload as RpcRequest, subscriptions);
    return answer ? stringifyJson(answer) : undefined;
  }

  let nextSubscription = 1;
  function subscribe(params: unknown[], subscriptions: Subscriptions): string {
    const id = numberToHex(BigInt(Date.now()) * 1000n + BigInt(nextSubscription++));
    if (params[0] === 'newHeads') subscriptions.set(id, { kind: 'newHeads' });
    else if (params[0] === 'logs') subscriptions.set(id, { kind: 'logs', criteria: readLogCriteria(params[1]) });
    else throw new RpcError(-32602, `unsupported subscription: ${String(params[0])}`);
    return id;
  }

  const sockets = new Map<WebSocket, Subscriptions>();
  const notify = (socket: WebSocket, subscription: string, result: unknown) =>
    socket.send(stringifyJson({ jsonrpc: '2.0', method: 'eth_subscription', params: { subscription, result } }));

  const onBlock = (block: ChainBlock) => {
    for (const [socket, subscriptions] of sockets) {
      for (const [id, sub] of subscriptions) {
        if (sub.kind === 'newHeads') {
          const { transactions: _omit, ...header } = formatBlock(block, false);
          notify(socket, id, header);
        } else {
          for (const receipt of block.receipts) {
            for (const log of receipt.logs) if (logMatches(log, sub.criteria)) notify(socket, id, formatLog(log));
          }
        }
      }
    }
  };
  const onReorg = ({ removed }: { removed: ChainBlock[] }) => {
    for (const [socket, subscriptions] of sockets) {
      for (const [id, sub] of subscriptions) {
        if (sub.kind !== 'logs') continue;
        for (const block of removed) {
          for (const receipt of block.receipts) {
            for (const log of receipt.logs) if (logMatches(log, sub.criteria)) notify(socket, id, formatLog(log, true));
          }
        }
      }
    }
  };
  node.on('block', onBlock);
  node.on('reorg', onReorg);

  const readBody = (req: IncomingMessage) =>
    new Promise<string>((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_BODY_BYTES) {
          reject(new RpcError(-32600, `request body over ${MAX_BODY_BYTES} bytes`));
          req.destroy();
        } else chunks.push(chunk);
      });
      req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      req.on('error', reject);
    });

  const server: Server = createServer(async (req, res) => {
    if (req.method === 'GET') {
      res
        .writeHead(200, { 'content-type': 'text/plain' })
        .end('arkivector devnet: JSON-RPC 2.0 over POST, WebSocket on the same port\n');
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'GET, POST' }).end();
      return;
    }
    try {
      const answer = await handlePayload(await readBody(req));
      res.writeHead(200, { 'content-type': 'application/json' }).end(answer ?? '');
    } catch (error) {
      res
        .writeHead(413, { 'content-type': 'application/json' })
        .end(stringifyJson(errorBody(null, -32600, (error as Error).message)));
    }
  });
  server.keepAliveTimeout = HTTP_KEEP_ALIVE_TIMEOUT_MS;
  server.headersTimeout = HTTP_KEEP_ALIVE_TIMEOUT_MS + 1000;

  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_BODY_BYTES });
  server.on('upgrade', (req, socket, head) =>
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req)),
  );
  wss.on('connection', (socket: WebSocket) => {
    const subscriptions: Subscriptions = new Map();
    sockets.set(socket, subscriptions);
    socket.on('message', async (data) => {
      const answer = await handlePayload(data.toString(), subscriptions);
      if (answer && socket.readyState === socket.OPEN) socket.send(answer);
    });
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  const hostForUrl = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${hostForUrl}:${bound}`,
    wsUrl: `ws://${hostForUrl}:${bound}`,
    port: bound,
    async close() {
      node.off('block', onBlock);
      node.off('reorg', onReorg);
      for (const socket of sockets.keys()) socket.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
