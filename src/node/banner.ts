// What `npm start` prints once the node runs: the chain, the embedder, where to connect, and how to try it.
import { resolve } from 'node:path';
import type { ChainProtocol } from '../chain/index.ts';
import { BIN_PATH } from '../packageInfo.ts';
import { redactUrl } from '../redactUrl.ts';
import type { ServiceContext } from '../service/index.ts';
import { stdioServerEntry } from '../stdioSnippet.ts';
import type { Gateway } from './types.ts';

const PROTOCOL_NAMES: Record<ChainProtocol, string> = { v1: 'Arkiv v1', dbchain: 'DB-chain' };

/** The banner's line on text: which embedder, and what that means for writes and searches. */
function embedderLine(embedder: ServiceContext['embedder']): string {
  if (!embedder) return 'none (--embedder none): vectors and keyword search only';
  const where = embedder.kind === 'local' ? 'in this process' : 'through an embeddings endpoint';
  const state = embedder.state?.();
  if (state?.state === 'failed')
    return `${embedder.model} ${where}, unavailable (text calls answer embedder_unavailable): ${state.error}${state.ways_out ? `. ${state.ways_out}` : ''}`;
  const when =
    embedder.kind === 'local' && state?.state === 'idle'
      ? `; fetched from the hub at the first text call (${state.source})`
      : '';
  return `${embedder.model} ${where}: text writes and text search${when}`;
}

/** What `npm start` prints: where the gateway is and how to connect an MCP client. */
export function connectionBanner(gateway: Gateway): string {
  const lines = ['arkivector is running.', ''];
  if (gateway.devnet)
    lines.push(
      `Chain:    embedded ${PROTOCOL_NAMES[gateway.protocol]} devnet at ${gateway.devnet.url} (chain id ${gateway.chainId}), head block ${gateway.devnet.headNumber}${gateway.seededDemo ? ', demo collections notes and demo.docs written' : ''}`,
      gateway.devnetState
        ? `Memory:   kept in ${resolve(gateway.devnetState)} (delete it to start from an empty chain)`
        : 'Memory:   forgotten on exit (--no-data-dir; without it the chain is kept in the per-user data directory)',
    );
  else
    lines.push(
      `Chain:    ${redactUrl(gateway.rpc)} (chain id ${gateway.chainId}, ${PROTOCOL_NAMES[gateway.protocol]}${gateway.protocolSource === 'detected' || gateway.protocolSource === 'remembered' ? `, ${gateway.protocolSource}` : ''})`,
    );
  lines.push(`Embedder: ${embedderLine(gateway.ctx.embedder)}`);
  if (gateway.httpUrl) {
    const writes = gateway.stdio.signer;
    // Security: the header names the variable, never a token.
    const auth = gateway.tokens ? ' --header "Authorization: Bearer $ARKIVECTOR_TOKEN"' : '';
    const stdio = stdioServerEntry(gateway.stdio, process.execPath, [BIN_PATH]);
    lines.push(
      `Console:  ${gateway.httpUrl}/`,
      `REST:     ${gateway.httpUrl}/v1/collections`,
      `MCP:      ${gateway.httpUrl}/mcp (streamable HTTP)`,
      '',
      'Claude Code:',
      `  claude mcp add --transport http arkivector ${gateway.httpUrl}/mcp${auth}`,
      '',
      'Claude Desktop (claude_desktop_config.json), over stdio against the same chain:',
      // One line, spaced for reading (newlines inside values are escaped by JSON, so none is removed).
      `  ${JSON.stringify({ mcpServers: { arkivector: stdio.entry } }, null, 1).replace(/\n\s*/g, ' ')}`,
      // Security: placeholders, never the keys. Without one the stdio node would be read-only while this one writes.
      ...(writes
        ? [
            `  (put the signer's key in place of 0x…${gateway.devnet ? `; this devnet's funded account is ${gateway.ctx.writer?.address}` : ''}, or drop "env" for a read-only node)`,
          ]
        : []),
      // Security: URLs may carry credentials (user:password, a key in the path or query); the banner shows
      // the redacted form, and says so when it differs.
      ...(stdio.redacted
        ? ['  (a URL is shown without its credentials or path: put the full URL in the snippet yourself)']
        : []),
    );
    // The demo lines search the demo data: only a node that wrote it has it.
    if (gateway.demo)
      lines.push(
        '',
        'Try it:',
        `  curl -s ${gateway.httpUrl}/v1/collections${gateway.tokens ? ' -H "Authorization: Bearer $ARKIVECTOR_TOKEN"' : ''}`,
        `  curl -s -X POST ${gateway.httpUrl}/v1/collections/notes/search -H 'content-type: application/json'${gateway.tokens ? ' -H "Authorization: Bearer $ARKIVECTOR_TOKEN"' : ''} -d '{"vector":[1,0.05,0,0],"k":2,"where":"topic = \\"pets\\"","include_document":true}'`,
      );
  }
  return lines.join('\n');
}
