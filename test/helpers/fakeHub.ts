// A loopback stand-in for the model hub's file route, `GET /ORG/NAME/resolve/REVISION/PATH` (what the
// Hugging Face hub serves, with content-length), serving the files given for one repository and revision.
// Tests script faults per file (a status, silence after the headers, other bytes, a redirect) and read
// the requested paths back. `refuseOtherHosts` makes this process's fetch refuse every host but 127.0.0.1.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Agent, buildConnector, getGlobalDispatcher, setGlobalDispatcher } from 'undici';

export type HubFault =
  | { status: number }
  | { silent: true }
  | { body: Buffer }
  | { redirect: string }
  /** One byte every `everyMs` (a hub that never stalls long enough for the idle timeout). */
  | { drip: { everyMs: number } }
  /** The file is served once `until` settles; `reached` is called when the request arrives. */
  | { hold: { until: Promise<void>; reached(): void } };

export interface FakeHub {
  /** Base URL, `http://127.0.0.1:PORT`. */
  url: string;
  /** Paths requested, in order. */
  requests: string[];
  /** By file path in the repository; applied to every request of that file until deleted. */
  faults: Map<string, HubFault>;
  close(): Promise<void>;
}

export async function startFakeHub(repo: string, revision: string, files: Record<string, Buffer>): Promise<FakeHub> {
  const requests: string[] = [];
  const faults = new Map<string, HubFault>();
  const sockets = new Set<Socket>();
  const prefix = `/${repo}/resolve/${revision}/`;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? '';
    requests.push(path);
    const file = path.startsWith(prefix) ? decodeURIComponent(path.slice(prefix.length)) : undefined;
    const body = file === undefined ? undefined : files[file];
    const fault = file === undefined ? undefined : faults.get(file);
    if (fault && 'status' in fault) return res.writeHead(fault.status).end(`fault ${fault.status}`);
    if (fault && 'redirect' in fault) return res.writeHead(302, { location: fault.redirect }).end();
    if (fault && 'drip' in fault && body) {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length });
      let sent = 0;
      const timer = setInterval(() => {
        if (sent >= body.length || res.destroyed) return clearInterval(timer);
        res.write(body.subarray(sent, ++sent));
      }, fault.drip.everyMs);
      res.once('close', () => clearInterval(timer));
      return;
    }
    if (fault && 'hold' in fault && body) {
      fault.hold.reached();
      return void fault.hold.until.then(() => res.end(body));
    }
    if (body === undefined || req.method !== 'GET') return res.writeHead(404).end('Entry not found');
    const served = fault && 'body' in fault ? fault.body : body;
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': served.length });
    // Silence: the headers and half the bytes, then nothing (a stalled transfer).
    if (fault && 'silent' in fault) return void res.write(served.subarray(0, served.length >> 1));
    res.end(served);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    faults,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Makes this process's fetch (undici's global dispatcher) refuse any host but 127.0.0.1; returns the undo. */
export function refuseOtherHosts(): () => void {
  const previous = getGlobalDispatcher();
  const connect = buildConnector({});
  setGlobalDispatcher(
    new Agent({
      connect(options, callback) {
        if (options.hostname !== '127.0.0.1') return callback(new Error(`the test refuses ${options.hostname}`), null);
        return connect(options, callback);
      },
    }),
  );
  return () => setGlobalDispatcher(previous);
}
