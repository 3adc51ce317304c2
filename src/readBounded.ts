// Reads an HTTP answer body as UTF-8 text, refusing it as soon as it passes a size limit, so a misbehaving
// server (an embedder, a gateway) cannot make a client buffer without bound. Shared by the embedder client
// and the shell's REST client, which each say what "too large" means to their caller.

/**
 * @param body the response body (`response.body` of fetch), or null for an empty answer
 * @param limit bytes at most
 * @param tooLarge the error to throw once the body passes `limit`
 */
export async function readBounded(
  body: AsyncIterable<Uint8Array> | null,
  limit: number,
  tooLarge: (limit: number) => Error,
): Promise<string> {
  if (!body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
