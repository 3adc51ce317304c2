// The JSON Schemas the tools publish, in the subset every MCP client reads. zod's draft-7 output says
// "any value" as `additionalProperties: {}` (with `propertyNames: {type: "string"}`) and unions of
// primitives as `type: [...]`; strict clients (the MCP Inspector's --strict, some LLM tool APIs) warn on
// both. Each is rewritten into its plain equivalent: the accepted values do not change.

type Schema = Record<string, unknown>;

const isObject = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isEmpty = (value: unknown) => isObject(value) && Object.keys(value).length === 0;

/**
 * A copy of `schema` without `additionalProperties: {}` (absent means the same), without the always-true
 * `propertyNames: {type: "string"}` beside it, and with every `type: [a, b]` as `anyOf: [{type: a}, {type: b}]`.
 */
export function portableSchema<T>(schema: T): T {
  return rewrite(schema) as T;
}

function rewrite(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewrite);
  if (!isObject(value)) return value;
  const out: Schema = {};
  for (const [key, child] of Object.entries(value)) out[key] = rewrite(child);
  if (isEmpty(out.additionalProperties)) {
    delete out.additionalProperties;
    if (
      isObject(out.propertyNames) &&
      out.propertyNames.type === 'string' &&
      Object.keys(out.propertyNames).length === 1
    )
      delete out.propertyNames;
  }
  if (Array.isArray(out.type)) {
    const types = out.type as unknown[];
    delete out.type;
    const alternatives = types.map((type) => ({ type }));
    // An existing anyOf (none today) must hold as well: both are required then.
    if (out.anyOf === undefined) out.anyOf = alternatives;
    else out.allOf = [...((out.allOf as unknown[]) ?? []), { anyOf: alternatives }];
  }
  return out;
}

/** Where `schema` is not portable (paths like `properties/filter/additionalProperties`); empty when it is. */
export function portabilityProblems(schema: unknown, path = ''): string[] {
  if (Array.isArray(schema)) return schema.flatMap((item, i) => portabilityProblems(item, `${path}/${i}`));
  if (!isObject(schema)) return [];
  const here: string[] = [];
  if (isEmpty(schema.additionalProperties)) here.push(`${path}/additionalProperties: {}`);
  if (Array.isArray(schema.type)) here.push(`${path}/type: ${JSON.stringify(schema.type)}`);
  return [...here, ...Object.entries(schema).flatMap(([key, child]) => portabilityProblems(child, `${path}/${key}`))];
}
