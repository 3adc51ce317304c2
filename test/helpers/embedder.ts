// A stand-in OpenAI-compatible embeddings endpoint: a real HTTP server on 127.0.0.1 that maps words to the
// demo's 4-d space, so semantic and hybrid search can be tested without a model.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export async function startEmbedder(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const { input } = JSON.parse(body) as { input: string };
      const embedding = /cat|purr/i.test(input)
        ? [1, 0, 0, 0]
        : /fern|plant/i.test(input)
          ? [0, 0.1, 1, 0.2]
          : [0.5, 0.5, 0.5, 0.5];
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: [{ embedding }] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, server };
}
