// Validates operation arguments with the shared zod schemas; failures become invalid_argument with
// the zod issue list (README, "Errors").
import type { z } from 'zod';
import { InvalidArgumentError } from './errors.ts';

export function validate<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  refuseProtoKeys(input);
  const parsed = schema.safeParse(input ?? {});
  if (parsed.success) return parsed.data;
  const errors = parsed.error.issues.map((issue) => ({
    path: issue.path.map(String).join('.'),
    message: issue.message,
  }));
  const first = errors[0];
  throw new InvalidArgumentError(
    first ? `${first.path ? `${first.path}: ` : ''}${first.message}` : 'invalid arguments',
    errors,
  );
}

/**
 * Validates with `fast`, a cheaper schema accepting exactly what `full` accepts; anything `fast`
 * refuses is validated again with `full`, so errors keep `full`'s issues and paths.
 */
export function validateFast<S extends z.ZodType>(fast: z.ZodType<z.output<S>>, full: S, input: unknown): z.output<S> {
  const parsed = fast.safeParse(input ?? {});
  return parsed.success ? parsed.data : validate(full, input);
}

/**
 * JSON.parse makes `"__proto__"` an own key, which z.record drops without an issue: an upsert's attribute or
 * a definition's attribute of that name would vanish from a write that then succeeds. Refused instead.
 * Iterative, since a body may nest as deep as its size allows.
 */
function refuseProtoKeys(input: unknown): void {
  type Frame = { value: unknown; key: string; parent: Frame | undefined };
  const stack: Frame[] = [{ value: input, key: '', parent: undefined }];
  for (let frame = stack.pop(); frame; frame = stack.pop()) {
    const { value } = frame;
    if (typeof value !== 'object' || value === null) continue;
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--)
        if (typeof value[i] === 'object') stack.push({ value: value[i], key: String(i), parent: frame });
      continue;
    }
    if (Object.hasOwn(value, '__proto__')) {
      const path = ['__proto__'];
      for (let at: Frame | undefined = frame; at?.parent; at = at.parent) path.unshift(at.key);
      const joined = path.join('.');
      throw new InvalidArgumentError(`${joined}: "__proto__" is not a valid name`, [
        { path: joined, message: '"__proto__" is not a valid name' },
      ]);
    }
    for (const [key, child] of Object.entries(value))
      if (typeof child === 'object') stack.push({ value: child, key, parent: frame });
  }
}
