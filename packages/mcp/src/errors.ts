import { AgentdError, errorGuard } from '@agentd/errors';

/** Why an MCP operation failed. */
export type AgentdMcpErrorCode =
  | 'INVALID_OPTIONS'
  | 'SERVER_DISABLED'
  | 'SERVER_UNAVAILABLE'
  | 'CALL_TIMEOUT'
  | 'CALL_FAILED'
  | 'NOT_ALLOWED'
  | 'UNAUTHORIZED';

/** The error of `@agentd/mcp`: a stable `code`, `data` with the server id where there is one. */
export class AgentdMcpError extends AgentdError<AgentdMcpErrorCode> {
  override readonly name = 'AgentdMcpError';
}

/** Whether `error` is an {@link AgentdMcpError} (of `code`, when given). */
export const isAgentdMcpError = errorGuard(AgentdMcpError);
