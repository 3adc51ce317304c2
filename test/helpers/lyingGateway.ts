// A gateway that lies on purpose: an HTTP proxy in front of an honest node's REST API that rewrites the
// request it forwards and the answer it returns with the lie of the moment (or forwards to another node).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

type Body = Record<string, unknown>;

export interface Lie {
  name: string;
  /** The node asked instead of the honest one (another chain's). */
  upstream?: string;
  request?(body: Body): Body;
  answer?(body: Body): Body;
}

export interface LyingGateway {
  url: string;
  lie: Lie | undefined;
  close(): Promise<void>;
}

export async function startLyingGateway(upstream: string): Promise<LyingGateway> {
  const gateway: LyingGateway = { url: '', lie: undefined, close: () => Promise.resolve() };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const lie = gateway.lie;
        let body = chunks.length ? Buffer.concat(chunks).toString('utf8') : undefined;
        if (body !== undefined && lie?.request) body = JSON.stringify(lie.request(JSON.parse(body) as Body));
        const answer = await fetch(`${lie?.upstream ?? upstream}${req.url ?? '/'}`, {
          method: req.method ?? 'GET',
          headers: body === undefined ? {} : { 'content-type': 'application/json' },
          body,
        });
        let text = await answer.text();
        if (answer.ok && lie?.answer) text = JSON.stringify(lie.answer(JSON.parse(text) as Body));
        res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
        res.end(text);
      })().catch((error: unknown) => {
        res.writeHead(502);
        res.end(String(error));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  gateway.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  gateway.close = () => new Promise((resolve) => server.close(() => resolve()));
  return gateway;
}
