// DOM helpers of the console. Everything shown comes from the API and may come from the chain, so it is
// untrusted: text is only ever set as text nodes (never innerHTML), and links are built from encoded path
// segments behind a `#`.

const SVG_NS = 'http://www.w3.org/2000/svg';

const main = document.getElementById('main');

/**
 * Creates an element. Children that are strings or numbers become text nodes, so chain data can never
 * become markup. Props: `class`, `on<event>`, anything else is set as an attribute.
 */
export function h(tag, props = {}, ...children) {
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

export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, String(value));
  append(el, children);
  return el;
}

export function show(...children) {
  main.replaceChildren(...children.flat().filter(Boolean));
}

/** A definition list of [label, value] rows; values may be nodes or text. */
export function facts(rows) {
  return h(
    'dl',
    { class: 'facts' },
    rows
      .filter(Boolean)
      .map(([label, value, testId]) => [h('dt', {}, label), h('dd', { 'data-field': testId ?? label }, value ?? '—')]),
  );
}

/** A `#/…` link from path segments, each percent-encoded. */
export function link(segments, ...children) {
  return h('a', { href: `#/${segments.map(encodeURIComponent).join('/')}` }, ...children);
}

/** Table columns of numbers, right-aligned like their cells. */
export const NUMERIC = new Set(['live', 'rejected', 'shadowed', '#', 'score', 'distance', 'block']);
export const json = (value) => JSON.stringify(value);

/** A list table in its own scroll box (narrow screens): header cells from `columns`, then `body` (a tbody or rows). */
export function listTable(columns, body) {
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
