import type { AgentdErrorOptions } from '@agentd/contracts';
import { AgentdError, errorGuard } from '@agentd/errors';

/** Codes of {@link AgentRuntimeError}. */
export type AgentRuntimeErrorCode =
  /** Options or a definition failed validation (`data.issues`). */
  | 'INVALID_OPTIONS'
  /** No agent of that id (`data.agentId`). */
  | 'AGENT_NOT_FOUND'
  /** An agent of that id already exists. */
  | 'AGENT_EXISTS'
  /** The session's agent was deleted; the session keeps its history but takes no new turns. */
  | 'AGENT_DELETED'
  /** The agent is suspended and refuses new messages. */
  | 'AGENT_SUSPENDED'
  /** The session is bound to another agent than the one asked for. */
  | 'SESSION_AGENT_MISMATCH'
  /** No session of that key (`data.sessionKey`). */
  | 'SESSION_NOT_FOUND'
  /** No provider of that id, or the model is not served by it. */
  | 'PROVIDER_NOT_FOUND'
  /** A `${secret:NAME}` reference of a provider could not be resolved (`data.name`, never a value). */
  | 'SECRET_MISSING'
  /** The provider refused the credential (HTTP 401/403). */
  | 'PROVIDER_AUTH'
  /** The provider kept answering 429 after every retry. */
  | 'PROVIDER_RATE_LIMITED'
  /** Any other provider failure (network, 5xx after retries, malformed stream). */
  | 'PROVIDER_ERROR'
  /** A provider request exceeded its `timeoutMs`. */
  | 'PROVIDER_TIMEOUT'
  /** The runtime was closed. */
  | 'CLOSED';

/**
 * Options of the {@link AgentRuntimeError} constructor. `data`: structured detail (ids, counts,
 * HTTP status); never message bodies or secrets.
 */
export type AgentRuntimeErrorOptions = AgentdErrorOptions;

/** The one error class of @agentd/agent-runtime. */
export class AgentRuntimeError extends AgentdError<AgentRuntimeErrorCode> {
  override readonly name = 'AgentRuntimeError';
}

/** Whether `value` is an {@link AgentRuntimeError}, optionally of one code. */
export const isAgentRuntimeError = errorGuard(AgentRuntimeError);
