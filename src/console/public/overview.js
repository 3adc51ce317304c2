// The overview page: the chain and the node from GET /v1/status, a chart of the last minutes, and the
// node's recall estimate.
import { facts, h, link, listTable, show, svg } from './dom.js';
import { HISTORY_SAMPLES, history, POLL_MS, state } from './state.js';

/** The call budget the node paces itself to, and its next poll (a bootstrap's next call) while it waits (not a stall). */
function budgetFact(budget, bootstrapping) {
  const at = budget.next_poll_at && new Date(budget.next_poll_at).toLocaleTimeString();
  const next = at ? `; next ${bootstrapping ? 'call' : 'poll'} at ${at}` : '';
  return `${budget.calls_per_hour} calls an hour${next}`;
}

/** When the head was last read: a paced node's head, lag and state are as old as this. */
function headSeenFact(status) {
  const age = Math.max(0, Math.round((Date.now() - Date.parse(status.head_seen_at)) / 1000));
  return `${new Date(status.head_seen_at).toLocaleTimeString()} (${age < 120 ? `${age} s` : `${Math.round(age / 60)} min`} ago)`;
}

/** How far a bootstrap has read while it runs. */
function bootstrapFact(b) {
  return `at block ${b.block}: ${b.entities.toLocaleString('en-US')} entities in ${b.pages.toLocaleString('en-US')} pages so far`;
}

const ether = (wei) => {
  const n = BigInt(wei);
  return n < 0n ? 'unknown' : `${Number(n / 10n ** 14n) / 10_000} ETH`;
};

/** Lag and blocks applied per poll over the kept samples, as two polylines in an inline SVG. */
function chart() {
  const width = 640;
  const height = 160;
  const pad = 28;
  const top = Math.max(1, ...history.map((s) => Math.max(s.lag, s.applied)));
  const x = (i) => pad + (i * (width - 2 * pad)) / Math.max(1, HISTORY_SAMPLES - 1);
  const y = (v) => height - pad - (v * (height - 2 * pad)) / top;
  const offset = HISTORY_SAMPLES - history.length;
  const line = (field, cls) =>
    svg('polyline', {
      class: cls,
      points: history.map((s, i) => `${x(i + offset).toFixed(1)},${y(s[field]).toFixed(1)}`).join(' '),
    });
  return svg(
    'svg',
    { viewBox: `0 0 ${width} ${height}`, class: 'chart', role: 'img', 'aria-label': 'lag and blocks applied' },
    svg('line', { class: 'axis', x1: pad, y1: height - pad, x2: width - pad, y2: height - pad }),
    svg('line', { class: 'axis', x1: pad, y1: pad, x2: pad, y2: height - pad }),
    svg('text', { x: 4, y: pad + 4, class: 'tick' }, String(top)),
    svg('text', { x: 4, y: height - pad + 4, class: 'tick' }, '0'),
    svg('text', { x: pad, y: height - 8, class: 'tick' }, `−${Math.round((HISTORY_SAMPLES * POLL_MS) / 60000)} min`),
    svg('text', { x: width - pad - 22, y: height - 8, class: 'tick' }, 'now'),
    line('applied', 'applied'),
    line('lag', 'lag'),
  );
}

/** What the node does with text: the model, where it runs, and (local) whether it is ready. */
function embedderFact(e) {
  if (!e) return 'none (keyword and vector searches only)';
  if (e.kind !== 'local')
    return `${e.model} (embeddings server${e.source ? ` at ${e.source}` : ''}${e.state === 'failed' ? `, failing: ${e.error}` : ''})`;
  const fetching =
    e.state === 'fetching'
      ? `: fetching ${e.file ?? ''} ${(e.received_bytes / 1e6).toFixed(1)}${e.total_bytes ? ` of ${(e.total_bytes / 1e6).toFixed(1)}` : ''} MB`
      : e.state === 'failed'
        ? `: ${e.error}`
        : '';
  return `${e.model} (in this process, ${e.state}${fetching})`;
}

export function renderOverview() {
  const s = state.lastStatus;
  if (!s) return show(h('p', { class: 'muted' }, 'Waiting for /v1/status…'));
  const access = state.node.tokens
    ? state.node.public_read
      ? 'bearer tokens; reads are public'
      : 'bearer tokens'
    : state.node.public_read
      ? 'public reads; no writes'
      : 'local trust (loopback, no tokens)';
  show(
    h('h1', {}, 'Overview'),
    h(
      'div',
      { class: 'grid' },
      h(
        'section',
        { class: 'card' },
        h('h2', {}, 'Chain'),
        facts([
          ['chain id', s.chain_id, 'chain_id'],
          ['rpc', h('code', {}, s.rpc), 'rpc'],
          ['head block', s.head_block, 'head_block'],
          s.head_seen_at ? ['head seen', headSeenFact(s), 'head_seen_at'] : null,
          ['as_of_block', s.as_of_block, 'as_of_block'],
          ['lag', s.lag, 'lag'],
          ['sync_state', h('span', { class: `pill ${s.sync_state}` }, s.sync_state), 'sync_state'],
          s.rate_limited
            ? ['rate limited', 'the RPC asked this node to wait: it is throttled, not down', 'rate_limited']
            : null,
          s.bootstrap ? ['bootstrap', bootstrapFact(s.bootstrap), 'bootstrap'] : null,
          s.rpc_budget ? ['rpc budget', budgetFact(s.rpc_budget, Boolean(s.bootstrap)), 'rpc_budget'] : null,
          s.last_error ? ['last error', s.last_error, 'last_error'] : null,
        ]),
      ),
      h(
        'section',
        { class: 'card' },
        h('h2', {}, 'Node'),
        facts([
          ['mode', s.signer ? 'write daemon' : 'read-only', 'mode'],
          [
            'signer',
            s.signer ? [h('code', {}, s.signer.address), ` (${ether(s.signer.balance_wei)})`] : 'none',
            'signer',
          ],
          ['access', access, 'access'],
          ['embedder', embedderFact(s.embedder), 'embedder'],
          ['collections', link(['collections'], String(s.collections)), 'collections'],
        ]),
      ),
    ),
    h(
      'section',
      { class: 'card' },
      h(
        'h2',
        {},
        'Last minutes ',
        h('span', { class: 'legend lag' }, 'lag'),
        ' ',
        h('span', { class: 'legend applied' }, 'blocks applied per poll'),
      ),
      chart(),
    ),
    recallCard(s.recall ?? []),
  );
}

/** The node's own recall@10 estimate per collection (GET /v1/status `recall`), largest first. */
function recallCard(rows) {
  if (rows.length === 0) return null;
  return h(
    'section',
    { class: 'card', 'data-field': 'recall' },
    h('h2', {}, 'Recall estimate'),
    h(
      'p',
      { class: 'muted' },
      "recall@10 of each collection's default search against the exact answer, on sampled records",
    ),
    listTable(
      ['collection', 'records', 'recall@10', 'search', 'measured'],
      rows.map((r) =>
        h(
          'tr',
          { 'data-recall': r.collection },
          h('td', {}, link(['collections', r.collection], r.collection)),
          h('td', { class: 'num' }, r.records),
          h('td', { class: 'num' }, r.recall_at_10 === null ? 'measuring…' : r.recall_at_10.toFixed(3)),
          h('td', {}, r.search_mode ?? ''),
          h('td', {}, r.measured_at ?? (r.search_mode === 'exact' ? 'exact by construction' : '')),
        ),
      ),
    ),
  );
}
