// Optional push of new heads (--ws): an eth_subscribe("newHeads") WebSocket whose notifications wake the
// indexer at once instead of at its next poll. Polling stays the source of truth; this only cuts latency,
// so failures just reconnect with backoff and never stop the node.
import WebSocket from 'ws';
import type { HeadWatch } from './source.ts';
import { redactUrl } from './transport.ts';

export type HeadWatcher = HeadWatch;
export interface HeadWatcherLogger {
  debug(fields: Record<string, unknown>, message: string): void;
}

export function watchHeads(
  url: string,
  onHead: (blockNumber: number) => void,
  options: {
    logger?: HeadWatcherLogger;
    onSubscribed?: () => void;
  } = {},
): HeadWatcher {
  const { logger } = options;
  let socket: WebSocket | undefined;
  let closed = false;
  let backoff = 500;
  let timer: NodeJS.Timeout | undefined;
  const connect = () => {
    if (closed) return;
    const current = new WebSocket(url);
    socket = current;
    current.on('open', () => {
      backoff = 500;
      current.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] }));
    });
    current.on('message', (data) => {
      try {
        const message = JSON.parse(data.toString()) as {
          id?: number;
          result?: unknown;
          method?: string;
          params?: { result?: { number?: string } };
        };
        if (message.id === 1 && typeof message.result === 'string') options.onSubscribed?.();
        const number = message.params?.result?.number;
        if (message.method === 'eth_subscription' && number) onHead(Number(BigInt(number)));
      } catch {
        // not ours to judge: the poll loop reads the chain anyway
      }
    });
    current.on('error', (error) =>
      logger?.debug({ ws: redactUrl(url), error: error.message }, 'newHeads socket error'),
    );
    current.on('close', () => {
      if (closed) return;
      timer = setTimeout(connect, backoff);
      timer.unref();
      backoff = Math.min(backoff * 2, 30_000);
    });
  };
  connect();
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      socket?.terminate();
    },
  };
}
