// URLs reach logs, errors and answers (the RPC, the embedder, a gateway): credentials, query strings and
// paths (API keys often live there) are dropped first. A leaf module so the client commands, which never
// touch the chain, do not load the chain layer for it.

/**
 * @example redactUrl('https://u:p@rpc.example/v1/KEY?x=1') // 'https://rpc.example/…'
 */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    const path = parsed.pathname && parsed.pathname !== '/' ? '/…' : '';
    return `${parsed.protocol}//${parsed.host}${path}`;
  } catch {
    return '<invalid url>';
  }
}
