import type { z } from 'zod';
import { invalidRequest, type OpenAiApiError } from '../errors.js';

/** A 400 naming the first offending field of a failed parse, as OpenAI names `param`. */
export function fromZodError(error: z.ZodError): OpenAiApiError {
  const [issue] = error.issues;
  const param = (issue?.path ?? [])
    .map((segment, index) =>
      typeof segment === 'number' ? `[${segment}]` : `${index > 0 ? '.' : ''}${String(segment)}`,
    )
    .join('');
  return invalidRequest(
    `Invalid ${param || 'request'}: ${issue?.message ?? 'invalid value'}`,
    param || undefined,
  );
}

/** `body` as `schema` parses it; a body that fails answers the 400 of {@link fromZodError}. */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const checked = schema.safeParse(body);
  if (!checked.success) throw fromZodError(checked.error);
  return checked.data;
}
