import type { ValidationIssue } from '@agentd/contracts';
import type { z } from 'zod';
import { AgentRuntimeError } from '../errors.js';

/** One validation problem, as `data.issues` of an `INVALID_OPTIONS` error lists it. */
export type OptionIssue = ValidationIssue;

/** The `INVALID_OPTIONS` error naming the first issue in its message and all of them in `data.issues`. */
export function invalidOptions(where: string, issues: OptionIssue[]): AgentRuntimeError {
  const first = issues[0];
  return new AgentRuntimeError(
    'INVALID_OPTIONS',
    `${where}: ${first ? `${first.path.join('.') || '<root>'}: ${first.message}` : 'invalid options'}`,
    { data: { issues } },
  );
}

/** Validates factory options with zod and names the failing fields in the error. */
export function parseOptions<T extends z.ZodType>(schema: T, options: unknown, where: string): z.output<T> {
  const result = schema.safeParse(options);
  if (result.success) return result.data;
  throw invalidOptions(where, issuesOf(result.error));
}

/** The issues of a zod error in the `data.issues` form. */
export function issuesOf(error: z.ZodError): OptionIssue[] {
  return error.issues.map((issue) => ({
    path: issue.path.map((part) => (typeof part === 'symbol' ? String(part) : part)),
    code: issue.code,
    message: issue.message,
  }));
}
