// A node with static bearer tokens (--tokens) and OAuth-capable MCP clients, with the SDK's real Client and
// StreamableHTTPClientTransport: a token passed as a header works and triggers no OAuth discovery; a client
// with an OAuth provider and no token gets a 401 whose WWW-Authenticate names no resource metadata, finds
// no metadata at any discovery path (each a 404 saying how to pass the token), and stops after one bounded
// round of probes, without looping or re-sending the request.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { loadAccessPolicy } from '../../src/http/index.ts';
import { startChain, type Chain, type Node } from './fixture.ts';

const SECRET = 'static-token-secret-0123456789';

interface Seen {
  method: string;
  path: string;
  status: number;
  challenge: string | null;
  body: string;
}

/** A fetch that records every request the client makes and the answer it got. */
function recordingFetch(seen: Seen[]): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const response = await fetch(request);
    const body = await response.clone().text();
    seen.push({
      method: request.method,
      path: new URL(request.url).pathname,
      status: response.status,
      challenge: response.headers.get('www-authenticate'),
      body,
    });
    return response;
  };
}

/** What an OAuth-capable client such as the MCP Inspector brings: an interactive provider with nothing stored. */
function interactiveProvider(): OAuthClientProvider & { redirects: URL[] } {
  let client: unknown;
  const redirects: URL[] = [];
  return {
    redirects,
    redirectUrl: 'http://127.0.0.1:6274/oauth/callback',
    clientMetadata: { client_name: 'inspector-like', redirect_uris: ['http://127.0.0.1:6274/oauth/callback'] },
    clientInformation: () => client as never,
    saveClientInformation: (info) => void (client = info),
    tokens: () => undefined,
    saveTokens: () => {},
    redirectToAuthorization: (url) => void redirects.push(url),
    saveCodeVerifier: () => {},
    codeVerifier: () => 'verifier',
  };
}

describe('static bearer tokens and OAuth-capable MCP clients', () => {
  let chain: Chain;
  let node: Node;
  before(async () => {
    chain = await startChain();
    node = await chain.node({
      access: await loadAccessPolicy({ tokensEnv: `read:${SECRET}`, publicRead: false, host: '127.0.0.1' }),
    });
  });
  after(async () => {
    await chain?.close();
  });

  for (const withProvider of [false, true])
    test(`the token in a header works, and no OAuth discovery happens (${withProvider ? 'with' : 'without'} an OAuth provider)`, async () => {
      const seen: Seen[] = [];
      const transport = new StreamableHTTPClientTransport(new URL(`${node.url}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${SECRET}` } },
        fetch: recordingFetch(seen),
        ...(withProvider ? { authProvider: interactiveProvider() } : {}),
      });
      const client = new Client({ name: 'static-token', version: '1.0.0' });
      await client.connect(transport);
      try {
        const { tools } = await client.listTools();
        assert.ok(tools.some((t) => t.name === 'arkivector_search'));
      } finally {
        await client.close();
      }
      assert.deepEqual(
        seen.filter((s) => s.path !== '/mcp'),
        [],
      );
      assert.ok(
        seen.every((s) => s.status < 400 || s.status === 405),
        JSON.stringify(seen),
      );
    });

  test('without a token, an OAuth client finds no metadata and stops after one bounded round', async () => {
    const seen: Seen[] = [];
    const provider = interactiveProvider();
    const transport = new StreamableHTTPClientTransport(new URL(`${node.url}/mcp`), {
      fetch: recordingFetch(seen),
      authProvider: provider,
    });
    const client = new Client({ name: 'oauth-client', version: '1.0.0' });
    await assert.rejects(client.connect(transport));
    await client.close().catch(() => {});

    const [first, ...probes] = seen;
    assert.equal(first?.path, '/mcp');
    assert.equal(first?.status, 401);
    // A static-token challenge: no resource_metadata for the client to follow.
    assert.equal(first?.challenge, 'Bearer realm="arkivector"');
    // The request is never re-sent (no loop), the probes are few, and none is repeated.
    assert.equal(seen.filter((s) => s.path === '/mcp').length, 1, JSON.stringify(seen.map((s) => s.path)));
    assert.ok(probes.length > 0 && probes.length <= 10, JSON.stringify(probes.map((s) => s.path)));
    assert.equal(new Set(probes.map((s) => `${s.method} ${s.path}`)).size, probes.length);
    assert.ok(probes.some((s) => s.path.startsWith('/.well-known/oauth-protected-resource')));
    for (const probe of probes) {
      assert.equal(probe.status, 404, `${probe.method} ${probe.path}`);
      assert.match(JSON.parse(probe.body).detail, /static bearer tokens, sent as "Authorization: Bearer <token>"/);
    }
    // Nothing was authorized: the user was never sent to an authorization page.
    assert.deepEqual(provider.redirects, []);
  });
});
