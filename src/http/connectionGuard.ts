// Who may hold the node's connections. At most `max` are open; each address (an IPv4 address, or the /64 an
// IPv6 address lies in: one host holds a whole /64) at most `perAddress`. A request body arriving slower
// than `bodyMinBytesPerS` (once `bodyGraceMs` have passed) is cut. When the node is full, a new connection
// closes the connection idle longest, else the slowest body still arriving, and is refused only when every
// connection is busy with a request the node itself is answering.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface ConnectionLimits {
  max: number;
  perAddress: number;
  bodyMinBytesPerS: number;
  bodyGraceMs: number;
  /** How often bodies are checked against the rate. */
  checkMs: number;
}

/** The group a peer's connections count against: its IPv4 address, or its IPv6 /64. */
export function addressGroup(address: string | undefined): string {
  if (!address) return '';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1] as string;
  if (!address.includes(':')) return address;
  const bare = address.split('%')[0] as string;
  const [head = '', tail] = bare.split('::');
  const groups = (part: string) => (part ? part.split(':') : []);
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const full = [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${full
    .slice(0, 4)
    .map((g) => Number.parseInt(g || '0', 16).toString(16))
    .join(':')}::/64`;
}

/** A request whose body is still arriving: when it started and the socket's bytes read then. */
interface Upload {
  request: IncomingMessage;
  startedAt: number;
  bytesAtStart: number;
}

export function guardConnections(server: Server, limits: ConnectionLimits): void {
  const open = new Set<Socket>();
  /** Idle connections, longest idle first (Set order is insertion order). */
  const idle = new Set<Socket>();
  const inFlight = new Map<Socket, number>();
  const uploads = new Map<Socket, Upload>();
  const groups = new Map<string, Set<Socket>>();
  const groupOf = new Map<Socket, string>();
  const drop = (socket: Socket) => {
    open.delete(socket);
    idle.delete(socket);
    inFlight.delete(socket);
    uploads.delete(socket);
    const group = groupOf.get(socket);
    groupOf.delete(socket);
    const members = group === undefined ? undefined : groups.get(group);
    members?.delete(socket);
    if (group !== undefined && members?.size === 0) groups.delete(group);
  };
  const close = (socket: Socket) => {
    drop(socket);
    socket.destroy();
  };
  /** Whether the body of the socket's request is still arriving (the app reads what came: none waits). */
  const receiving = (upload: Upload) => !upload.request.complete && upload.request.readableLength === 0;
  const rate = (socket: Socket, upload: Upload, now: number) =>
    (socket.bytesRead - upload.bytesAtStart) / Math.max(0.001, (now - upload.startedAt) / 1000);
  const slowestUpload = (among: Iterable<Socket>): Socket | undefined => {
    const now = Date.now();
    let slowest: Socket | undefined;
    let slowestRate = Number.POSITIVE_INFINITY;
    for (const socket of among) {
      const upload = uploads.get(socket);
      if (!upload || !receiving(upload)) continue;
      const r = rate(socket, upload, now);
      if (r < slowestRate) [slowest, slowestRate] = [socket, r];
    }
    return slowest;
  };
  /** A connection to close so that one more fits among `among`: the longest idle, else the slowest body. */
  const victim = (among: ReadonlySet<Socket> | readonly Socket[]): Socket | undefined => {
    for (const socket of among) if (idle.has(socket)) return socket;
    return slowestUpload(among);
  };

  server.on('connection', (socket: Socket) => {
    const group = addressGroup(socket.remoteAddress);
    const members = groups.get(group);
    if (members && members.size >= limits.perAddress) {
      const own = victim(members);
      if (own === undefined) {
        socket.destroy();
        return;
      }
      close(own);
    }
    if (open.size >= limits.max) {
      const other = victim(idle.size ? idle : [...uploads.keys()]);
      if (other === undefined) {
        socket.destroy();
        return;
      }
      close(other);
    }
    open.add(socket);
    idle.add(socket);
    groupOf.set(socket, group);
    const set = groups.get(group) ?? new Set<Socket>();
    set.add(socket);
    groups.set(group, set);
    socket.once('close', () => drop(socket));
  });

  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket;
    if (!open.has(socket)) return;
    idle.delete(socket);
    inFlight.set(socket, (inFlight.get(socket) ?? 0) + 1);
    if (!request.complete) uploads.set(socket, { request, startedAt: Date.now(), bytesAtStart: socket.bytesRead });
    response.once('close', () => {
      if (uploads.get(socket)?.request === request) uploads.delete(socket);
      const left = (inFlight.get(socket) ?? 1) - 1;
      if (left > 0) inFlight.set(socket, left);
      else if (open.has(socket)) {
        inFlight.delete(socket);
        idle.add(socket);
      }
    });
  });

  const check = setInterval(() => {
    const now = Date.now();
    for (const [socket, upload] of uploads) {
      if (upload.request.complete) {
        uploads.delete(socket);
        continue;
      }
      if (now - upload.startedAt < limits.bodyGraceMs || !receiving(upload)) continue;
      if (rate(socket, upload, now) < limits.bodyMinBytesPerS) close(socket);
    }
  }, limits.checkMs);
  check.unref();
  server.once('close', () => clearInterval(check));
}
