import type { AgentdErrorOptions } from '@agentd/contracts';
import { AgentdError, errorGuard } from '@agentd/errors';

/**
 * Every `code` a {@link TerminalError} can carry.
 *
 * - `INVALID_OPTIONS`: options given to {@link createTerminalService} failed validation.
 * - `INVALID_PARAMS`: a parameter is malformed (`data.field`): an unknown key name, nothing to send.
 * - `SESSION_NOT_FOUND`: no open drive of this agent has the id (`data.sessionId`); when it
 *   was evicted recently, `data.evicted` holds the reason.
 * - `EVICTED`: this call hit the session's interaction limit; the drive was evicted
 *   (`data.reason: 'max_interactions'`).
 * - `SPAWN_FAILED`: the program could not be started in a pseudo-terminal.
 * - `CLOSED`: the service was shut down.
 */
export type TerminalErrorCode =
  | 'INVALID_OPTIONS'
  | 'INVALID_PARAMS'
  | 'SESSION_NOT_FOUND'
  | 'EVICTED'
  | 'SPAWN_FAILED'
  | 'CLOSED';

/** Options accepted by the {@link TerminalError} constructor. */
export type TerminalErrorOptions = AgentdErrorOptions;

/** The one error class thrown by this package; switch on `code`, not on the message. */
export class TerminalError extends AgentdError<TerminalErrorCode> {
  override readonly name = 'TerminalError';
}

/** True when `error` is a {@link TerminalError}, optionally with the given code. */
export const isTerminalError = errorGuard(TerminalError);
