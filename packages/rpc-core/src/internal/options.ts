import { toFieldIssues } from '@agentd/errors';
import { randomUUID } from 'node:crypto';
import { hasMethods } from '@agentd/input-guards';
import { z } from 'zod';
import { RpcCoreError } from '../errors.js';
import type { RpcLogger } from '../logger.js';

/** Accepts any function; zod cannot describe call signatures at runtime, TypeScript does that. */
export function fn<T>(label: string) {
  return z.custom<T>((value) => typeof value === 'function', { message: `${label} must be a function` });
}

/** Accepts anything shaped like {@link RpcLogger}. */
export const loggerSchema = z.custom<RpcLogger>(
  (value) => hasMethods(value, ['debug', 'info', 'warn', 'error']),
  { message: 'logger must have debug, info, warn and error methods' },
);

/** The default id source: random UUIDs, unique enough for connections, traces and requests. */
export const defaultRandomId = (): string => randomUUID();

/**
 * Validates a factory's options and turns a failure into an `INVALID_OPTIONS`
 * error naming every offending field.
 */
export function parseOptions<S extends z.ZodType>(schema: S, value: unknown, factory: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const detail = parsed.error.issues
    .map(
      (issue) => `${issue.path.length > 0 ? issue.path.map(String).join('.') : '(root)'}: ${issue.message}`,
    )
    .join('; ');
  throw new RpcCoreError('INVALID_OPTIONS', `${factory}: invalid options: ${detail}`, {
    cause: parsed.error,
    data: {
      issues: toFieldIssues(parsed.error.issues),
    },
  });
}
