import type { z } from 'zod';
import { AgentRuntimeError } from '../errors.js';

/** Validates factory options with zod and names the failing fields in the error. */
export function parseOptions<T extends z.ZodType>(schema: T, options: unknown, where: string): z.output<T> {
  const result = schema.safeParse(options);
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => ({
    path: issue.path.map((part) => (typeof part === 'symbol' ? String(part) : part)),
    code: issue.code,
    message: issue.message,
  }));
  const first = issues[0];
  throw new AgentRuntimeError(
    'INVALID_OPTIONS',
    `${where}: ${first ? `${first.path.join('.') || '<root>'}: ${first.message}` : 'invalid options'}`,
    { data: { issues } },
  );
}
