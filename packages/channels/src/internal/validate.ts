import type { z } from 'zod';
import { ChannelsError } from '../errors.js';

/** Parses `value` with `schema`, turning a zod failure into an `INVALID_OPTIONS` error naming the field. */
export function parseWith<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const first = result.error.issues[0];
  const field = first && first.path.length > 0 ? first.path.join('.') : what;
  throw new ChannelsError(
    'INVALID_OPTIONS',
    `Invalid ${what}: ${field}: ${first?.message ?? 'invalid value'}`,
    {
      cause: result.error,
      data: { issues: result.error.issues },
    },
  );
}
