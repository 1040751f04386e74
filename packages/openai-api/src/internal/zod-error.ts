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
