// Requests the HTTP parser refuses (headers over Node's limit, a malformed request, a request timeout) are
// answered, then the connection lingers: the server stops sending, reads and discards what the client is
// still sending for a short while, and only then closes. Closing at once, with the client's bytes still
// arriving, makes the kernel answer them with a reset, and a client that writes its whole request before
// reading (most do) sees "connection reset" instead of the answer.
import { STATUS_CODES, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface LingerLimits {
  /** How long a refused connection keeps reading before it closes. */
  lingerMs: number;
  /** Most bytes it reads meanwhile. */
  lingerBytes: number;
}

const statusOf = (code: string | undefined) =>
  code === 'HPE_HEADER_OVERFLOW'
    ? 431
    : code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW'
      ? 413
      : code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? 408
        : 400;

export function answerClientErrors(server: Server, limits: LingerLimits): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    // Node's own rule: answer only on a socket still writable whose current response has not started.
    const current = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (error.code === 'ECONNRESET' || !socket.writable || current?.headersSent) {
      socket.destroy();
      return;
    }
    const status = statusOf(error.code);
    const answer = `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`;
    // A client too slow to send its request is not sending much more: no reason to keep its socket.
    if (status === 408) {
      socket.end(answer, () => socket.destroy());
      return;
    }
    socket.end(answer);
    let read = 0;
    socket.on('data', (chunk: Buffer) => {
      read += chunk.length;
      if (read > limits.lingerBytes) socket.destroy();
    });
    socket.resume();
    const timer = setTimeout(() => socket.destroy(), limits.lingerMs);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  });
}
