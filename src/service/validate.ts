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
