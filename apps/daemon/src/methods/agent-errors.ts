import { AgentRuntimeError } from '@agentd/agent-runtime';
import { type ParamIssue, RpcError } from '@agentd/rpc-core';

/** `-32010`: the agent exists but cannot take the message (suspended, or deleted under a kept session). */
export const AGENT_UNAVAILABLE = -32010;
/** `-32011`: the model provider failed or is misconfigured (missing secret, refused key, 5xx after retries). */
export const PROVIDER_FAILED = -32011;

/** Maps agent-runtime errors to the wire errors of decisions.md and docs/decisions.md. */
export function toRpcError(error: unknown): unknown {
  if (!(error instanceof AgentRuntimeError)) return error;
  const data = error.data ?? {};
  switch (error.code) {
    case 'INVALID_OPTIONS': {
      const issues = (data.issues as ParamIssue[] | undefined) ?? [];
      return RpcError.invalidParams(`Invalid params: ${error.message.replace(/^runTurn: /, '')}`, issues);
    }
    case 'AGENT_NOT_FOUND':
      return RpcError.notFound('Agent', String(data.agentId ?? ''));
    case 'SESSION_NOT_FOUND':
      return RpcError.notFound('Session', String(data.sessionKey ?? ''));
    case 'AGENT_EXISTS':
      return RpcError.invalidParams(`Invalid params: name: agent already exists: ${String(data.agentId)}`, [
        { path: ['name'], code: 'custom', message: 'agent already exists' },
      ]);
    case 'SESSION_AGENT_MISMATCH':
      return RpcError.invalidParams(`Invalid params: agentId: ${error.message}`, [
        { path: ['agentId'], code: 'custom', message: error.message },
      ]);
    case 'PROVIDER_NOT_FOUND':
      return RpcError.invalidParams(`Invalid params: provider: ${error.message.replace(/^provider: /, '')}`, [
        { path: ['provider'], code: 'custom', message: error.message },
      ]);
    case 'AGENT_DELETED':
    case 'AGENT_SUSPENDED':
      return new RpcError(AGENT_UNAVAILABLE, error.message, {
        data: { reason: error.code.toLowerCase(), ...data },
      });
    case 'SECRET_MISSING':
    case 'PROVIDER_AUTH':
    case 'PROVIDER_RATE_LIMITED':
    case 'PROVIDER_ERROR':
    case 'PROVIDER_TIMEOUT':
      return new RpcError(PROVIDER_FAILED, error.message, {
        data: { reason: error.code.toLowerCase(), provider: data.provider },
      });
    default:
      return error;
  }
}
