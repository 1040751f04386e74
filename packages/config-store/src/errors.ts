import type { AgentdErrorOptions } from '@agentd/contracts';
import { AgentdError } from '@agentd/errors';

/**
 * Machine-readable reasons a config-store operation failed.
 *
 * - `INVALID_OPTIONS`: `createConfigStore` received options that do not validate.
 * - `NOT_LOADED`: a method was called before `load()` finished.
 * - `CONFIG_INVALID`: the config file on disk does not parse or validate; the store refuses to start.
 * - `VALIDATION`: a patch, full config or rollback target does not validate; nothing was written.
 * - `SECTION_NOT_FOUND`: the named section is not part of the schema.
 * - `NOT_FOUND`: the commit named by a sha does not exist in the config history.
 * - `SECRET_MISSING`: a `${secret:NAME}` reference names a secret the lookup does not know.
 * - `GIT_FAILED`: a git command failed; the config file was restored to its previous bytes.
 * - `IO_FAILED`: reading or writing a file in the data directory failed.
 */
export type ConfigStoreErrorCode =
  | 'INVALID_OPTIONS'
  | 'NOT_LOADED'
  | 'CONFIG_INVALID'
  | 'VALIDATION'
  | 'SECTION_NOT_FOUND'
  | 'NOT_FOUND'
  | 'SECRET_MISSING'
  | 'GIT_FAILED'
  | 'IO_FAILED';

/** One validation problem: where it is (dot path, empty for the root) and what is wrong. */
export interface ConfigIssue {
  /** Path segments from the config root. */
  path: (string | number)[];
  /** The same path joined with dots, for messages and logs. */
  pathText: string;
  /** Human-readable description. */
  message: string;
  /** zod issue code when the issue came from zod. */
  code?: string;
}

/**
 * Options accepted by the {@link ConfigStoreError} constructor. `data`: structured details (for
 * example `issues`); safe to send to a client, never holds secret values.
 */
export type ConfigStoreErrorOptions = AgentdErrorOptions;

/** The single error class thrown by this package; switch on `code`. `data.issues` lists the problems of `VALIDATION` and `CONFIG_INVALID`. */
export class ConfigStoreError extends AgentdError<ConfigStoreErrorCode> {
  override name = 'ConfigStoreError';
}
