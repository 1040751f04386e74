import type { z } from 'zod';
import { AuthScopesError, type AuthScopesErrorCode } from '../errors.js';

/** Renders zod issues as `path: message` pairs so the thrown message names the offending field. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.length > 0 ? issue.path.map(String).join('.') : '(root)';
      return `${path}: ${issue.message}`;
    })
    .join('; ');
}

/** Parses at a public boundary, turning a zod failure into this package's error class. */
export function parseOrThrow<T extends z.ZodType>(
  schema: T,
  input: unknown,
  code: AuthScopesErrorCode,
  what: string,
): z.output<T> {
  const result = schema.safeParse(input);
  if (!result.success) {
    throw new AuthScopesError(code, `Invalid ${what}: ${describeIssues(result.error)}`, {
      cause: result.error,
      data: { issues: result.error.issues },
    });
  }
  return result.data;
}
