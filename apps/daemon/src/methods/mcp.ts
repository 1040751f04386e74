import { randomUUID } from 'node:crypto';
import { DEFAULT_AGENT_ID, formatSessionKey } from '@agentd/agent-runtime';
import type { Identity } from '@agentd/auth-scopes';
import type { GatewayCall } from '@agentd/mcp';
import type { Dispatcher } from '@agentd/rpc-core';

/**
 * The gateway as an MCP caller sees it: each MCP tool or resource is one JSON-RPC request
 * dispatched with the caller's identity, so scope checks (audited), tenant binding, params
 * validation and error mapping are exactly those of `/rpc`. A failure rejects with the wire
 * error object (`code`, `message`).
 */
export function gatewayCallAs(dispatcher: Dispatcher, identity: Identity, signal?: AbortSignal): GatewayCall {
  const connection = {
    identity,
    connectionId: randomUUID(),
    transport: 'http' as const,
    ...(signal ? { signal } : {}),
  };
  let sequence = 0;
  return async (method, params) => {
    const answer = await dispatcher.dispatch({ jsonrpc: '2.0', id: ++sequence, method, params }, connection);
    if (answer === undefined || Array.isArray(answer)) throw { code: -32603, message: 'Internal error' };
    if ('error' in answer) throw answer.error;
    return answer.result;
  };
}

/**
 * The session an MCP `ask_agent` naming none continues: `<tenant>:mcp:<clientId>/<agentId>`
 * (tenant `default` for unbound tokens), one per MCP client and agent, so it never meets the
 * caller's `/rpc` default session, which may belong to another agent.
 */
export function mcpDefaultSessionKey(identity: Identity, agentId: string | undefined): string {
  return formatSessionKey({
    tenantId: identity.tenant ?? 'default',
    channelId: 'mcp',
    userId: `${identity.clientId}/${agentId ?? DEFAULT_AGENT_ID}`,
  });
}
