// Validates operation arguments with the shared zod schemas; failures become invalid_argument with
// the zod issue list (README, "Errors").
import type { z } from 'zod';
import { InvalidArgumentError } from './errors.ts';

export function validate<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
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
