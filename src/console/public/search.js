// The search box of a collection's page and its results: a vector, or text in keyword, semantic or hybrid
// mode, as far as the node's embedder can answer now.
import { api, collectionPath, problemView } from './api.js';
import { attributesView, filterExamples } from './attributes.js';
import { h, json, link, listTable } from './dom.js';
import { state } from './state.js';

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
export function playground(c, embedder) {
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
  state.onStatus = (status) => follow(status.embedder);
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
