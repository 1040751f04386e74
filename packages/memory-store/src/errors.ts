import type { AgentdErrorOptions } from '@agentd/contracts';
import { AgentdError, errorGuard } from '@agentd/errors';

/**
 * Every `code` a {@link MemoryStoreError} can carry.
 *
 * - `INVALID_OPTIONS`: options or arguments failed validation.
 * - `INVALID_INPUT`: a method argument failed validation (`data.issues` lists why).
 * - `NOT_FOUND`: no entry has the given id.
 * - `EMBEDDER_FAILED`: the embedder (a remote endpoint or a local model) failed or answered nonsense.
 * - `EMBEDDER_UNAVAILABLE`: the configured embedder cannot be loaded on this machine.
 * - `DIMENSIONS_MISMATCH`: an embedding's length differs from the store's dimensions.
 * - `RERANKER_FAILED`: the reranker failed or timed out (recall falls back and logs; this reaches callers of the reranker only).
 * - `CLOSED`: the store was used after `close()`.
 */
export type MemoryStoreErrorCode =
  | 'INVALID_OPTIONS'
  | 'INVALID_INPUT'
  | 'NOT_FOUND'
  | 'EMBEDDER_FAILED'
  | 'EMBEDDER_UNAVAILABLE'
  | 'DIMENSIONS_MISMATCH'
  | 'RERANKER_FAILED'
  | 'CLOSED';

/**
 * Options accepted by the {@link MemoryStoreError} constructor. `data`: structured detail for logs;
 * never holds keys or memory content.
 */
export type MemoryStoreErrorOptions = AgentdErrorOptions;

/** The one error class thrown by this package; switch on `code`, not on the message. */
export class MemoryStoreError extends AgentdError<MemoryStoreErrorCode> {
  override readonly name = 'MemoryStoreError';
}

/** True when `error` is a {@link MemoryStoreError}, optionally with the given code. */
export const isMemoryStoreError = errorGuard(MemoryStoreError);
