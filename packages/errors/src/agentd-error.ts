import type { AgentdErrorOptions } from '@agentd/contracts';

/**
 * The base of every package's error class: a stable string `code` to switch on, optional
 * structured `data`, and the underlying error kept as the standard `Error.cause`.
 *
 * A package declares its own class (its `name`, its `code` union, the shape of its `data`)
 * and nothing else:
 *
 * ```ts
 * export class StorageError extends AgentdError<StorageErrorCode> {
 *   override readonly name = 'StorageError';
 * }
 * ```
 *
 * @typeParam C - the codes the subclass can carry.
 * @typeParam D - the shape of `data`; a plain record unless the subclass says more.
 */
export abstract class AgentdError<C extends string = string, D = Record<string, unknown>> extends Error {
  /** What went wrong, as a stable string; branch on it, not on the message. */
  readonly code: C;
  /** Structured detail for callers and logs (ids, counts, `issues`); never secrets or message bodies. */
  readonly data: D | undefined;

  /**
   * @param code - the stable reason.
   * @param message - a human-readable sentence.
   * @param options - `cause` (the underlying error, for logs) and `data`.
   */
  constructor(code: C, message: string, options: AgentdErrorOptions<D> = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.data = options.data;
  }
}

/** A type guard made by {@link errorGuard}: is `error` an `E`, and of `code` when one is given? */
export type ErrorGuard<E extends AgentdError<string, unknown>> = (
  error: unknown,
  code?: E['code'],
) => error is E;

/**
 * Makes the `isXError(error, code?)` guard of an error class: true when `error` is an instance
 * of `type` (subclasses included) and, when `code` is given, carries that code.
 *
 * ```ts
 * export const isStorageError = errorGuard(StorageError);
 * if (isStorageError(error, 'BUSY')) retry();
 * ```
 */
export function errorGuard<E extends AgentdError<string, unknown>>(
  type: abstract new (...args: never[]) => E,
): ErrorGuard<E> {
  return (error, code): error is E => error instanceof type && (code === undefined || error.code === code);
}
