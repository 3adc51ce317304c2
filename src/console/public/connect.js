// The Connect page: MCP client and REST snippets for this node, with a copy button each.
import { h, show } from './dom.js';
import { state } from './state.js';

function snippet(title, text, note) {
  const button = h('button', { type: 'button', class: 'copy' }, 'Copy');
  button.addEventListener('click', () => {
    navigator.clipboard.writeText(text).then(
      () => {
        button.textContent = 'Copied';
      },
      () => {
        button.textContent = 'Select and copy';
      },
    );
  });
  return h(
    'section',
    { class: 'card' },
    h('h2', {}, title, ' ', button),
    note ? h('p', {}, note) : null,
    h('pre', { class: 'snippet' }, text),
  );
}

export function renderConnect() {
  const mcp = `${location.origin}/mcp`;
  const header = 'Authorization: Bearer $ARKIVECTOR_TOKEN';
  const desktopHttp = {
    mcpServers: {
      arkivector: {
        command: 'npx',
        args: [
          '-y',
          'mcp-remote',
          mcp,
          // biome-ignore lint/suspicious/noTemplateCurlyInString: mcp-remote expands ${VAR} from its env itself
          ...(state.node.tokens ? ['--header', 'Authorization: Bearer ${ARKIVECTOR_TOKEN}'] : []),
        ],
        ...(state.node.tokens ? { env: { ARKIVECTOR_TOKEN: '<your token>' } } : {}),
      },
    },
  };
  // The node's own entry (the banner's snippet, with `arkivector` as the command): flags and env placeholders.
  const desktopStdio = { mcpServers: { arkivector: state.node.stdio } };
  show(
    h('h1', {}, 'Connect an MCP client'),
    state.node.tokens
      ? h('p', {}, 'This node requires a bearer token: set ', h('code', {}, 'ARKIVECTOR_TOKEN'), ' to yours first.')
      : null,
    snippet(
      'Claude Code',
      `claude mcp add --transport http arkivector ${mcp}${state.node.tokens ? ` --header "${header}"` : ''}`,
    ),
    snippet(
      'Claude Desktop (claude_desktop_config.json), through this node over HTTP',
      JSON.stringify(desktopHttp, null, 2),
    ),
    snippet(
      'Claude Desktop, with its own arkivector over stdio against the same chain',
      JSON.stringify(desktopStdio, null, 2),
      [
        'Needs the arkivector command on your PATH. The package is in no registry: install it from a checkout of arkivector with ',
        h('code', { 'data-field': 'install' }, state.node.install.join(' && ')),
        '.',
        state.node.stdio.env
          ? ' Put your keys in place of the env placeholders, or drop env for a read-only node.'
          : '',
        state.node.stdio_redacted
          ? ' A URL is shown without its credentials or path: put the full URL in yourself.'
          : '',
      ],
    ),
    snippet('REST', `curl -s ${location.origin}/v1/collections${state.node.tokens ? ` -H "${header}"` : ''}`),
  );
}
