// The arkivector console: a hash-routed page over the node's REST API. Everything shown comes from the
// API and may come from the chain, so it is untrusted: text is only ever set as text nodes (never
// innerHTML), and links are built from encoded path segments behind a `#`.

const TOKEN_KEY = 'arkivector.token';
/** How often the overview polls GET /v1/status, and how many samples the chart keeps (5 minutes). */
const POLL_MS = 2000;
const HISTORY_SAMPLES = 150;
const SVG_NS = 'http://www.w3.org/2000/svg';

const main = document.getElementById('main');
const syncPill = document.getElementById('sync');
const signOut = document.getElementById('signout');

/** Node facts from /console/node.json (access, embedder, signer). */
let node = null;
/** Status samples for the chart: {at, asOf, lag, applied}. */
const history = [];
let lastStatus = null;
let pollTimer;
/** Counts page renders, so a slow answer for a page the user has left does not replace the newer page. */
let renderSeq = 0;
/** The shown page's reaction to each new status (the search box follows the embedder); reset per page. */
let onStatus = null;

// ---------- DOM helpers (text only) ----------

/**
 * Creates an element. Children that are strings or numbers become text nodes, so chain data can never
 * become markup. Props: `class`, `on<event>`, anything else is set as an attribute.
 */
function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') el.className = value;
    else if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, String(value));
  append(el, children);
  return el;
}

function show(...children) {
  main.replaceChildren(...children.flat().filter(Boolean));
}

/** A definition list of [label, value] rows; values may be nodes or text. */
function facts(rows) {
  return h(
    'dl',
    { class: 'facts' },
    rows
      .filter(Boolean)
      .map(([label, value, testId]) => [h('dt', {}, label), h('dd', { 'data-field': testId ?? label }, value ?? '—')]),
  );
}

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

/** A `#/…` link from path segments, each percent-encoded. */
function link(segments, ...children) {
  return h('a', { href: `#/${segments.map(encodeURIComponent).join('/')}` }, ...children);
}

/** Table columns of numbers, right-aligned like their cells. */
const NUMERIC = new Set(['live', 'rejected', 'shadowed', '#', 'score', 'distance', 'block']);
const json = (value) => JSON.stringify(value);

/** A list table in its own scroll box (narrow screens): header cells from `columns`, then `body` (a tbody or rows). */
function listTable(columns, body) {
  const tbody = body instanceof Node ? body : h('tbody', {}, body);
  return h(
    'div',
    { class: 'scroll' },
    h(
      'table',
      { class: 'list' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          columns.map((c) => h('th', { class: NUMERIC.has(c) ? 'num' : undefined }, c)),
        ),
      ),
      tbody,
    ),
  );
}
const ether = (wei) => {
  const n = BigInt(wei);
  return n < 0n ? 'unknown' : `${Number(n / 10n ** 14n) / 10_000} ETH`;
};

// ---------- API ----------

class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail ?? `HTTP ${status}`);
    this.status = status;
    this.problem = problem ?? {};
  }
}

async function api(path, init = {}) {
  const headers = new Headers(init.headers);
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers.set('authorization', `Bearer ${token}`);
  if (init.body !== undefined) headers.set('content-type', 'application/json');
  const response = await fetch(path, { ...init, headers });
  const body = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, body);
  return body;
}

const collectionPath = (name) => `/v1/collections/${encodeURIComponent(name)}`;

/** Renders a problem answer; a filter error shows the `where` text with a caret at its position. */
function problemView(error, where) {
  if (!(error instanceof ApiError)) return h('div', { class: 'error', role: 'alert' }, String(error.message ?? error));
  const p = error.problem;
  const parts = [
    h('strong', {}, p.title ?? `HTTP ${error.status}`, p.code ? ` (${p.code})` : ''),
    ': ',
    p.detail ?? '',
  ];
  if (p.code === 'invalid_filter' && typeof p.position === 'number' && where) {
    parts.push(
      h(
        'pre',
        { class: 'caret', 'data-field': 'filter-error' },
        `${where}\n${' '.repeat(Math.min(p.position, where.length))}^ position ${p.position}`,
      ),
    );
  }
  if (typeof p.path === 'string') parts.push(h('div', {}, 'at filter path ', h('code', {}, p.path)));
  if (p.code === 'dimension_mismatch') parts.push(h('div', {}, `expected ${p.expected} numbers, got ${p.got}`));
  if (Array.isArray(p.errors))
    parts.push(
      h(
        'ul',
        {},
        p.errors.map((e) => h('li', {}, h('code', {}, e.path || '(body)'), ' ', e.message)),
      ),
    );
  return h('div', { class: 'error', role: 'alert' }, parts);
}

// ---------- access ----------

async function loadNode() {
  try {
    node = await api('/console/node.json');
    signOut.hidden = !sessionStorage.getItem(TOKEN_KEY);
    return true;
  } catch (error) {
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
      tokenPrompt(error);
      return false;
    }
    throw error;
  }
}

function tokenPrompt(error) {
  const hadToken = Boolean(sessionStorage.getItem(TOKEN_KEY));
  const input = h('input', {
    type: 'password',
    name: 'token',
    autocomplete: 'off',
    required: true,
    placeholder: 'bearer token',
  });
  const form = h(
    'form',
    {
      class: 'card token',
      onsubmit: async (event) => {
        event.preventDefault();
        sessionStorage.setItem(TOKEN_KEY, input.value.trim());
        if (await loadNode()) start();
      },
    },
    h('h1', {}, 'This node needs a token'),
    h(
      'p',
      {},
      'Enter a bearer token with the read scope. It stays in this tab (sessionStorage) and is sent as ',
      h('code', {}, 'Authorization: Bearer …'),
      ' to the API only.',
    ),
    hadToken ? h('p', { class: 'error', role: 'alert' }, error.problem.detail ?? 'the token was refused') : null,
    input,
    h('button', { type: 'submit' }, 'Open console'),
  );
  sessionStorage.removeItem(TOKEN_KEY);
  signOut.hidden = true;
  show(form);
  input.focus();
}

signOut.addEventListener('click', () => {
  sessionStorage.removeItem(TOKEN_KEY);
  location.hash = '#/';
  location.reload();
});

// ---------- status polling and chart ----------

async function poll() {
  clearTimeout(pollTimer);
  try {
    const status = await api('/v1/status');
    const previous = history.at(-1);
    history.push({
      at: Date.now(),
      asOf: status.as_of_block,
      lag: status.lag ?? 0,
      // A rollback moves as_of_block back; it applied nothing new.
      applied: previous && status.as_of_block !== null ? Math.max(0, status.as_of_block - previous.asOf) : 0,
    });
    if (history.length > HISTORY_SAMPLES) history.splice(0, history.length - HISTORY_SAMPLES);
    lastStatus = status;
    onStatus?.(status);
    // Rate limited is said beside the state: the node waits as the RPC asks, which is not an outage.
    syncPill.textContent = status.rate_limited ? `${status.sync_state} · rate limited` : status.sync_state;
    syncPill.className = `pill ${status.sync_state}${status.rate_limited ? ' rate_limited' : ''}`;
    if (route().page === 'overview') renderOverview();
  } catch (error) {
    syncPill.textContent = 'unreachable';
    syncPill.className = 'pill stalled';
    if (error instanceof ApiError && error.status === 401) return tokenPrompt(error);
  }
  pollTimer = setTimeout(poll, POLL_MS);
}

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

function renderOverview() {
  const s = lastStatus;
  if (!s) return show(h('p', { class: 'muted' }, 'Waiting for /v1/status…'));
  const access = node.tokens
    ? node.public_read
      ? 'bearer tokens; reads are public'
      : 'bearer tokens'
    : node.public_read
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

// ---------- collections ----------

/** Collections per page of the list (the API's default). */
const COLLECTION_PAGE = 100;

const collectionRow = (c) =>
  h(
    'tr',
    { 'data-collection': c.name },
    h('td', {}, link(['collections', c.name], c.name)),
    h('td', {}, c.column),
    h('td', {}, c.metric),
    h('td', {}, `${c.index.type} ${c.index.opclass}`),
    h('td', { class: 'num' }, c.stats.live_entities),
    h('td', { class: 'num' }, c.stats.rejected),
    h('td', { class: 'num' }, c.stats.shadowed),
    h('td', {}, c.open ? 'open' : c.writers.length ? `owner + ${c.writers.length}` : 'owner only'),
  );

// A page at a time, by name (GET /v1/collections and its next_cursor): a public node may track thousands.
async function renderCollections() {
  const seq = renderSeq;
  const answer = await api(`/v1/collections?limit=${COLLECTION_PAGE}`);
  if (seq !== renderSeq) return;
  const body = h('tbody', {}, answer.collections.map(collectionRow));
  const more = h('button', { type: 'button', hidden: !answer.next_cursor, 'data-field': 'collections-more' }, 'More');
  const meta = h('p', { class: 'muted', 'data-field': 'collections-meta' });
  let shown = answer.collections.length;
  let cursor = answer.next_cursor;
  const describe = (page) => {
    meta.textContent = `${shown} of ${page.total} · as_of_block ${page.as_of_block} · ${page.sync_state}`;
  };
  describe(answer);
  more.addEventListener('click', async () => {
    const page = await api(
      `/v1/collections?${new URLSearchParams({ limit: String(COLLECTION_PAGE), cursor: cursor ?? '' })}`,
    );
    append(body, page.collections.map(collectionRow));
    shown += page.collections.length;
    cursor = page.next_cursor;
    more.hidden = !cursor;
    describe(page);
  });
  show(
    h('h1', {}, 'Collections'),
    meta,
    answer.collections.length === 0
      ? h('p', {}, 'No collections on this chain yet.')
      : [listTable(['name', 'column', 'metric', 'index', 'live', 'rejected', 'shadowed', 'writers'], body), more],
  );
}

async function renderCollection(name) {
  const seq = renderSeq;
  // The search box needs the embedder's state now, not at the next poll.
  const [c, status] = await Promise.all([api(collectionPath(name)), api('/v1/status')]);
  if (seq !== renderSeq) return;
  const attributes = Object.entries(c.attributes);
  show(
    h('p', { class: 'crumbs' }, link(['collections'], 'Collections'), ' / ', c.name),
    h('h1', {}, c.name, ' ', h('span', { class: 'muted' }, c.column)),
    c.description ? h('p', {}, c.description) : null,
    h(
      'div',
      { class: 'grid' },
      h(
        'section',
        { class: 'card' },
        h('h2', {}, 'Definition'),
        facts([
          ['column', c.column, 'column'],
          ['metric', c.metric, 'metric'],
          [
            'index',
            `${c.index.type} ${c.index.opclass} (m ${c.index.m}, ef_construction ${c.index.ef_construction}, ef_search ${c.index.ef_search})`,
            'index',
          ],
          [
            'attributes',
            attributes.length ? attributes.map(([n, t]) => h('code', { class: 'tag' }, `${n}: ${t}`)) : 'none',
            'attributes',
          ],
          [
            'writers',
            c.open
              ? 'open: anyone may write'
              : ['the owner', c.writers.map((w) => [', ', h('code', { class: 'tag' }, w)])],
            'writers',
          ],
          ['owner', h('code', {}, c.owner), 'owner'],
          ['embedder', c.embedder ? `${c.embedder.model}` : 'none recorded', 'embedder'],
          ['definition key', h('code', {}, c.definition_key), 'definition_key'],
        ]),
      ),
      h(
        'section',
        { class: 'card' },
        h('h2', {}, 'Stats'),
        facts([
          ['live entities', c.stats.live_entities, 'live_entities'],
          ['rejected', c.stats.rejected, 'rejected'],
          ['shadowed', c.stats.shadowed, 'shadowed'],
          ['as_of_block', c.as_of_block, 'as_of_block'],
          ['sync_state', c.sync_state, 'sync_state'],
        ]),
        h('h2', {}, 'Conflicts'),
        Array.isArray(c.conflicts) && c.conflicts.length
          ? h(
              'ul',
              { class: 'conflicts' },
              c.conflicts.map((x) => h('li', {}, h('code', {}, typeof x === 'string' ? x : json(x)))),
            )
          : h('p', { class: 'muted' }, 'none'),
      ),
    ),
    playground(c, status.embedder),
    entityList(c),
  );
}

/** Entities per page of the list (the API's default). */
const ENTITY_PAGE = 20;

/**
 * The collection's entities, newest first, a page at a time (GET …/entities with its cursor): what an
 * agent wrote, with documents. A `where` narrows it like the search's.
 */
function entityList(c) {
  const where = h('input', { name: 'where', placeholder: filterExamples(c).where, autocomplete: 'off' });
  const meta = h('p', { class: 'meta', 'data-field': 'entities-meta' });
  const body = h('tbody');
  const more = h('button', { type: 'button', hidden: true }, 'More');
  const output = h('div', { 'data-field': 'entities-error' });
  let cursor = null;
  let query = '';
  const load = async (first) => {
    const params = new URLSearchParams({ include_document: 'true', limit: String(ENTITY_PAGE) });
    if (query) params.set('where', query);
    if (!first && cursor) params.set('cursor', cursor);
    output.replaceChildren();
    try {
      const answer = await api(`${collectionPath(c.name)}/entities?${params}`);
      if (first) body.replaceChildren();
      append(
        body,
        answer.entities.map((e) =>
          h(
            'tr',
            { 'data-entity': e.key },
            h('td', { 'data-field': 'id' }, link(['collections', c.name, 'entities', e.key], e.id)),
            h('td', { class: 'num' }, e.last_modified_block),
            h('td', {}, attributesView(e.attributes)),
            h('td', { class: 'doc', 'data-field': 'document' }, e.document ?? ''),
          ),
        ),
      );
      cursor = answer.next_cursor;
      more.hidden = !cursor;
      meta.textContent = `${answer.total} entities · as_of_block ${answer.as_of_block} · ${answer.order} first`;
    } catch (error) {
      output.replaceChildren(problemView(error, query));
    }
  };
  more.addEventListener('click', () => load(false));
  const form = h(
    'form',
    {
      class: 'card entities',
      onsubmit: (event) => {
        event.preventDefault();
        query = where.value.trim();
        load(true);
      },
    },
    h('h2', {}, 'Entities'),
    h('label', {}, h('span', {}, 'where'), where),
    h('button', { type: 'submit' }, 'List'),
    output,
    meta,
    listTable(['id', 'block', 'attributes', 'document'], body),
    more,
  );
  load(true);
  return form;
}

/** Parses a pasted vector: a JSON array or numbers separated by commas or spaces. */
function parseVector(text) {
  const trimmed = text.trim();
  const items = trimmed.startsWith('[')
    ? JSON.parse(trimmed)
    : trimmed
        .split(/[\s,]+/)
        .filter(Boolean)
        .map(Number);
  if (!Array.isArray(items) || items.length === 0 || items.some((n) => typeof n !== 'number' || !Number.isFinite(n)))
    throw new Error('the vector must be a list of numbers, e.g. [1, 0, 0.5]');
  return items;
}

/** A literal of an attribute's declared type, in the `where` dialect and in JSON (for examples). */
const EXAMPLE_VALUES = {
  str: ["str('…')", '"…"'],
  i32: ['1', '1'],
  uint: ['1', '1'],
  f32: ['f32(0.5)', '0.5'],
  bool: ['bool(true)', 'true'],
};

/**
 * Example filters naming the collection's own attributes (numeric ones compared, others equal), so a
 * placeholder never suggests an attribute the collection lacks.
 */
function filterExamples(c) {
  const attributes = Object.entries(c.attributes).sort(([a], [b]) => (a < b ? -1 : 1));
  if (attributes.length === 0)
    return { where: 'this collection declares no attributes', filter: 'this collection declares no attributes' };
  const terms = attributes.slice(0, 2).map(([name, type]) => {
    const [literal, value] = EXAMPLE_VALUES[type] ?? EXAMPLE_VALUES.str;
    const numeric = type === 'i32' || type === 'uint' || type === 'f32';
    return {
      where: `${name} ${numeric ? '>=' : '='} ${literal}`,
      filter: { [numeric ? 'gte' : 'eq']: { [name]: JSON.parse(value) } },
    };
  });
  return {
    where: terms.map((t) => t.where).join(' && '),
    filter: json(terms.length === 1 ? terms[0].filter : { and: terms.map((t) => t.filter) }),
  };
}

/**
 * Why the node cannot embed a query for collection `c` now (GET /v1/status `embedder`), in one line with the
 * ways out; null when it can. Fetching, failed, no embedder, or another model than the collection records.
 */
function semanticUnavailable(c, e) {
  const keyword = 'mode "keyword" (BM25 over documents) works now';
  if (!e)
    return `this node has no embedder (--embedder none). Ways out: start it with --embedder local (the default model) or --embedder URL --embedder-model NAME; ${keyword}.`;
  if (c.embedder && c.embedder.model !== e.model)
    return `this collection was embedded with ${c.embedder.model} and this node embeds with ${e.model} (embedder_mismatch). Ways out: search it on a node that runs ${c.embedder.model}; ${keyword}.`;
  if (e.state === 'failed') {
    const retry = e.retry_at ? ` Not tried again before ${new Date(e.retry_at).toLocaleTimeString()}.` : '';
    return `the node's embedder ${e.model} has failed: ${e.error}.${retry} ${e.ways_out ?? `Ways out: ${keyword}.`}`;
  }
  if (e.state === 'fetching') {
    const of = e.total_bytes ? ` of ${(e.total_bytes / 1e6).toFixed(1)}` : '';
    return `the node is still fetching ${e.model} (${((e.received_bytes ?? 0) / 1e6).toFixed(1)}${of} MB); semantic search works once it has loaded, ${keyword}.`;
  }
  return null;
}

/** A vector query's placeholder: the collection's width, with an example. */
const vectorPlaceholder = (c) =>
  `vector of ${c.dim} numbers, e.g. [${Array.from({ length: Math.min(c.dim, 4) }, (_, i) => (i === 0 ? 1 : 0)).join(', ')}${c.dim > 4 ? ', …' : ''}]`;

/**
 * The search box. A text collection (its definition records a model) opens on a text search: semantic
 * while the node's embedder can answer, keyword otherwise, with one line saying why semantic is not offered.
 * It follows the embedder's state at each poll (a fetch that ends, a failure).
 */
function playground(c, embedder) {
  const field = (label, control) => h('label', {}, h('span', {}, label), control);
  const modes = Object.fromEntries(
    ['keyword', 'semantic', 'hybrid'].map((mode) => [mode, h('option', { value: mode })]),
  );
  const kind = h('select', { name: 'kind' }, h('option', { value: 'vector' }, 'vector'), Object.values(modes));
  const reason = h('p', { class: 'notice', 'data-field': 'semantic-unavailable', role: 'status', hidden: true });
  const query = h('textarea', { name: 'query', rows: 2 });
  const placeholder = () => {
    query.placeholder = kind.value === 'vector' ? vectorPlaceholder(c) : 'text to search for';
  };
  /** The user picked a kind: later states no longer change it unless it stops working. */
  let chosen = false;
  const follow = (e) => {
    const why = semanticUnavailable(c, e);
    modes.keyword.textContent = 'text: keyword';
    for (const mode of ['semantic', 'hybrid']) {
      modes[mode].disabled = why !== null;
      modes[mode].textContent = why ? `text: ${mode} (unavailable)` : `text: ${mode}`;
    }
    reason.hidden = why === null;
    reason.textContent = why ? `Semantic search unavailable: ${why}` : '';
    const broken = kind.selectedOptions[0]?.disabled;
    if (broken || (!chosen && c.embedder)) kind.value = why ? 'keyword' : 'semantic';
    placeholder();
  };
  follow(embedder);
  onStatus = (status) => follow(status.embedder);
  const examples = filterExamples(c);
  const where = h('input', { name: 'where', placeholder: examples.where, autocomplete: 'off' });
  const filter = h('textarea', { name: 'filter', rows: 1, placeholder: examples.filter });
  const k = h('input', { name: 'k', type: 'number', min: 1, max: 50, value: 10 });
  const withDocument = h('input', { name: 'include_document', type: 'checkbox', checked: true });
  const output = h('div', { class: 'results', 'data-field': 'results' });
  kind.addEventListener('change', () => {
    chosen = true;
    placeholder();
  });
  const form = h(
    'form',
    {
      class: 'card search',
      onsubmit: async (event) => {
        event.preventDefault();
        const body = { k: Number(k.value), include_document: withDocument.checked };
        try {
          if (kind.value === 'vector') body.vector = parseVector(query.value);
          else Object.assign(body, { text: query.value, mode: kind.value });
          if (where.value.trim()) body.where = where.value;
          if (filter.value.trim()) body.filter = JSON.parse(filter.value);
        } catch (error) {
          output.replaceChildren(h('div', { class: 'error', role: 'alert' }, error.message));
          return;
        }
        output.replaceChildren(h('p', { class: 'muted' }, 'Searching…'));
        try {
          const answer = await api(`${collectionPath(c.name)}/search`, { method: 'POST', body: json(body) });
          output.replaceChildren(resultsView(c, answer));
        } catch (error) {
          output.replaceChildren(problemView(error, body.where));
        }
      },
    },
    h('h2', {}, 'Search'),
    h(
      'div',
      { class: 'row' },
      field('query', kind),
      field('k', k),
      h('label', { class: 'inline' }, withDocument, ' include document'),
    ),
    reason,
    field('vector or text', query),
    field('where', where),
    field('filter (JSON)', filter),
    h('button', { type: 'submit' }, 'Search'),
    output,
  );
  return form;
}

/** An attribute as `name=value`; f32 values print with the precision they were stored at. */
function attributesView(attributes) {
  return Object.entries(attributes ?? {}).map(([name, a]) =>
    h('code', { class: 'tag' }, `${name}=${a.type === 'f32' ? Number(a.value.toPrecision(7)) : json(a.value)}`),
  );
}

function resultsView(c, answer) {
  return h(
    'div',
    {},
    h(
      'p',
      { class: 'meta', 'data-field': 'answer' },
      `as_of_block ${answer.as_of_block} · ${answer.sync_state} · mode ${answer.mode} · search_mode ${answer.search_mode} · ${answer.results.length} result(s)`,
    ),
    listTable(
      ['#', 'score', 'distance', 'id', 'entity key', 'attributes', 'document'],
      answer.results.map((r, i) =>
        h(
          'tr',
          { 'data-result': i },
          h('td', { class: 'num' }, i + 1),
          h('td', { class: 'num' }, r.score.toFixed(4)),
          h('td', { class: 'num' }, r.distance === undefined ? '—' : r.distance.toFixed(4)),
          h('td', { 'data-field': 'id' }, r.id),
          h(
            'td',
            {},
            link(['collections', c.name, 'entities', r.key], h('code', { class: 'key' }, `${r.key.slice(0, 10)}…`)),
          ),
          h('td', {}, attributesView(r.attributes)),
          h('td', { class: 'doc', 'data-field': 'document' }, r.document ?? ''),
        ),
      ),
    ),
  );
}

async function renderEntity(name, ref) {
  const seq = renderSeq;
  const answer = await api(`${collectionPath(name)}/entities/${encodeURIComponent(ref)}?include_document=true`);
  if (seq !== renderSeq) return;
  const e = answer.entity;
  show(
    h(
      'p',
      { class: 'crumbs' },
      link(['collections'], 'Collections'),
      ' / ',
      link(['collections', name], name),
      ' / ',
      e.id,
    ),
    h('h1', {}, e.id),
    h('p', { class: 'muted' }, `as_of_block ${answer.as_of_block} · ${answer.sync_state}`),
    h(
      'section',
      { class: 'card' },
      facts([
        ['id', e.id, 'id'],
        ['entity key', h('code', {}, e.key), 'key'],
        ['owner', h('code', {}, e.owner), 'owner'],
        ['creator', e.creator ? h('code', {}, e.creator) : '—', 'creator'],
        [
          'expires at block',
          e.expires_at_block === 'never' ? 'never (kept until deleted)' : e.expires_at_block,
          'expires_at_block',
        ],
        ['attributes', attributesView(e.attributes), 'attributes'],
        ['document', e.document ? h('pre', { class: 'doc' }, e.document) : '—', 'document'],
      ]),
    ),
  );
}

// ---------- connect ----------

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

function renderConnect() {
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
          ...(node.tokens ? ['--header', 'Authorization: Bearer ${ARKIVECTOR_TOKEN}'] : []),
        ],
        ...(node.tokens ? { env: { ARKIVECTOR_TOKEN: '<your token>' } } : {}),
      },
    },
  };
  // The node's own entry (the banner's snippet, with `arkivector` as the command): flags and env placeholders.
  const desktopStdio = { mcpServers: { arkivector: node.stdio } };
  show(
    h('h1', {}, 'Connect an MCP client'),
    node.tokens
      ? h('p', {}, 'This node requires a bearer token: set ', h('code', {}, 'ARKIVECTOR_TOKEN'), ' to yours first.')
      : null,
    snippet(
      'Claude Code',
      `claude mcp add --transport http arkivector ${mcp}${node.tokens ? ` --header "${header}"` : ''}`,
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
        h('code', { 'data-field': 'install' }, node.install.join(' && ')),
        '.',
        node.stdio.env ? ' Put your keys in place of the env placeholders, or drop env for a read-only node.' : '',
        node.stdio_redacted ? ' A URL is shown without its credentials or path: put the full URL in yourself.' : '',
      ],
    ),
    snippet('REST', `curl -s ${location.origin}/v1/collections${node.tokens ? ` -H "${header}"` : ''}`),
  );
}

// ---------- routing ----------

/** A route segment decoded, or undefined for a malformed percent-escape (decodeURIComponent throws). */
function decodeSegment(segment) {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

function route() {
  const parts = location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeSegment);
  if (parts.includes(undefined)) return { page: 'missing' };
  if (parts.length === 0) return { page: 'overview' };
  if (parts[0] === 'connect') return { page: 'connect' };
  if (parts[0] === 'collections' && parts.length === 1) return { page: 'collections' };
  if (parts[0] === 'collections' && parts.length === 2) return { page: 'collection', name: parts[1] };
  if (parts[0] === 'collections' && parts[2] === 'entities' && parts.length === 4)
    return { page: 'entity', name: parts[1], ref: parts[3] };
  return { page: 'missing' };
}

async function render() {
  const seq = ++renderSeq;
  onStatus = null;
  const r = route();
  for (const a of document.querySelectorAll('[data-nav]'))
    a.classList.toggle('active', a.dataset.nav === r.page || (a.dataset.nav === 'collections' && r.name !== undefined));
  try {
    if (r.page === 'overview') renderOverview();
    else if (r.page === 'collections') await renderCollections();
    else if (r.page === 'collection') await renderCollection(r.name);
    else if (r.page === 'entity') await renderEntity(r.name, r.ref);
    else if (r.page === 'connect') renderConnect();
    else show(h('h1', {}, 'Not found'), h('p', {}, link([], 'Back to the overview')));
  } catch (error) {
    if (seq !== renderSeq) return;
    if (error instanceof ApiError && error.status === 401) return tokenPrompt(error);
    show(h('h1', {}, 'Could not load this page'), problemView(error));
  }
  document.body.dataset.page = r.page;
}

let started = false;
function start() {
  if (!started) {
    started = true;
    window.addEventListener('hashchange', render);
  }
  render();
  poll();
}

loadNode().then(
  (ok) => ok && start(),
  (error) => show(h('h1', {}, 'The node did not answer'), problemView(error)),
);
