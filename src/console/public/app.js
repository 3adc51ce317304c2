// The arkivector console: a hash-routed page over the node's REST API (the browser modules beside this one
// draw each page; dom.js says why everything is set as text). This one asks for a token when the node wants
// one, polls GET /v1/status, and routes.
import { ApiError, api, problemView, TOKEN_KEY } from './api.js';
import { renderCollection, renderCollections, renderEntity } from './collections.js';
import { renderConnect } from './connect.js';
import { h, link, show } from './dom.js';
import { renderOverview } from './overview.js';
import { HISTORY_SAMPLES, history, POLL_MS, state } from './state.js';

const syncPill = document.getElementById('sync');
const signOut = document.getElementById('signout');
let pollTimer;

// ---------- access ----------

async function loadNode() {
  try {
    state.node = await api('/console/node.json');
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
    state.lastStatus = status;
    state.onStatus?.(status);
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
  const seq = ++state.renderSeq;
  state.onStatus = null;
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
    if (seq !== state.renderSeq) return;
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
