// The console's calls to the node's REST API, with the bearer token the user typed (kept in this tab's
// sessionStorage), and how a problem answer is shown.
import { h } from './dom.js';

export const TOKEN_KEY = 'arkivector.token';

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail ?? `HTTP ${status}`);
    this.status = status;
    this.problem = problem ?? {};
  }
}

export async function api(path, init = {}) {
  const headers = new Headers(init.headers);
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers.set('authorization', `Bearer ${token}`);
  if (init.body !== undefined) headers.set('content-type', 'application/json');
  const response = await fetch(path, { ...init, headers });
  const body = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, body);
  return body;
}

export const collectionPath = (name) => `/v1/collections/${encodeURIComponent(name)}`;

/** Renders a problem answer; a filter error shows the `where` text with a caret at its position. */
export function problemView(error, where) {
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
