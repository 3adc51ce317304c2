// A collection's declared attributes as the console shows them: as tags, and as example filters.
import { h, json } from './dom.js';

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
export function filterExamples(c) {
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

/** An attribute as `name=value`; f32 values print with the precision they were stored at. */
export function attributesView(attributes) {
  return Object.entries(attributes ?? {}).map(([name, a]) =>
    h('code', { class: 'tag' }, `${name}=${a.type === 'f32' ? Number(a.value.toPrecision(7)) : json(a.value)}`),
  );
}
