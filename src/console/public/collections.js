// The collection pages: the list a page at a time, one collection (definition, stats, search, entities),
// and one entity.
import { api, collectionPath, problemView } from './api.js';
import { attributesView, filterExamples } from './attributes.js';
import { append, facts, h, json, link, listTable, show } from './dom.js';
import { playground } from './search.js';
import { state } from './state.js';

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
export async function renderCollections() {
  const seq = state.renderSeq;
  const answer = await api(`/v1/collections?limit=${COLLECTION_PAGE}`);
  if (seq !== state.renderSeq) return;
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

export async function renderCollection(name) {
  const seq = state.renderSeq;
  // The search box needs the embedder's state now, not at the next poll.
  const [c, status] = await Promise.all([api(collectionPath(name)), api('/v1/status')]);
  if (seq !== state.renderSeq) return;
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

export async function renderEntity(name, ref) {
  const seq = state.renderSeq;
  const answer = await api(`${collectionPath(name)}/entities/${encodeURIComponent(ref)}?include_document=true`);
  if (seq !== state.renderSeq) return;
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
