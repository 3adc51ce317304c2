// Fails `arkivector serve` at once when its HTTP port is taken (say, by a second `npm start`), before it
// starts an embedded devnet or writes demo data, with a message that says what to do.
import { createServer } from 'node:net';

export class PortInUseError extends Error {
  override name = 'PortInUseError';
}

/**
 * Binds `host:port` for a moment and lets it go. The real listener binds later; a port taken in
 * between still fails there, only later.
 * @throws PortInUseError when the address is in use
 * @example await assertPortFree('127.0.0.1', 8787)
 */
export async function assertPortFree(host: string, port: number): Promise<void> {
  // Port 0 asks the system for a free port: it is always free.
  if (port === 0) return;
  const hostname = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  const probe = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.listen({ host: hostname, port, exclusive: true }, resolve);
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE')
      throw new PortInUseError(
        `${host}:${port} is already in use (is another arkivector running?): stop it, or pick another port with --http ${host}:PORT`,
      );
    throw error;
  } finally {
    await new Promise<void>((resolve) => (probe.listening ? probe.close(() => resolve()) : resolve()));
  }
}
