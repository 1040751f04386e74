import type { z } from 'zod';
import { WebhookError, type WebhookErrorCode } from '../errors.js';

/** Parses `value` with `schema`, turning a zod failure into a {@link WebhookError} naming the field. */
export function parseWith<S extends z.ZodType>(
  schema: S,
  value: unknown,
  what: string,
  code: WebhookErrorCode = 'INVALID_OPTIONS',
): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const first = result.error.issues[0];
  const field = first && first.path.length > 0 ? first.path.join('.') : what;
  throw new WebhookError(code, `Invalid ${what}: ${field}: ${first?.message ?? 'invalid value'}`, {
    cause: result.error,
    data: { issues: result.error.issues },
  });
}
