import { hasMethods } from '@agentd/input-guards';
import { z } from 'zod';
import type { AuthScopesLogger } from '../logger.js';

/** Accepts any function; zod 4 has no plain function schema for option bags. */
export const functionSchema = z.custom<(...args: never[]) => unknown>(
  (value) => typeof value === 'function',
  {
    message: 'expected a function',
  },
);

/** Accepts anything with the four pino level methods this package calls. */
export const loggerSchema = z.custom<AuthScopesLogger>(
  (value) => hasMethods(value, ['debug', 'info', 'warn', 'error']),
  { message: 'expected a logger with debug, info, warn and error methods' },
);
