// A loopback JSON-RPC proxy in front of a devnet, for tests of a hostile or broken RPC provider: each
// request goes to `intercept` (headers, body, and a `forward` that asks the devnet), which may answer
// itself (returns true) or let the devnet's answer through (false).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Intercept = (
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer,
  forward: () => Promise<{ status: number; text: string }>,
) => Promise<boolean>;

export interface RpcProxy {
  readonly server: Server;
  readonly url: string;
  /** Requests received so far. */
  readonly requests: number;
  close(): Promise<void>;
}

export async function devnetProxy(devnetUrl: string, intercept: Intercept): Promise<RpcProxy> {
  let requests = 0;
  const server = createServer(async (req, res) => {
    requests++;
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    let answer: { status: number; text: string } | undefined;
    const forward = async () => {
      const response = await fetch(devnetUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      answer = { status: response.status, text: await response.text() };
      return answer;
    };
    if (await intercept(req, res, body, forward)) return;
    const { status, text } = answer ?? (await forward());
    res.writeHead(status, { 'content-type': 'application/json' }).end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    get requests() {
      return requests;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The JSON-RPC methods of a request body (one call or a batch). */
export function methodsOf(body: Buffer): string[] {
  const parsed = JSON.parse(body.toString('utf8')) as { method: string } | { method: string }[];
  return (Array.isArray(parsed) ? parsed : [parsed]).map((call) => call.method);
}
