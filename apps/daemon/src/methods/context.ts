import {
  type AgentRuntime,
  DEFAULT_AGENT_ID,
  isAgentRuntimeError,
  sessionKeySchema,
} from '@agentd/agent-runtime';
import { type MethodContext, RpcError } from '@agentd/rpc-core';
import { z } from 'zod';
import { methodsOf } from './define.js';
import { type TenantGuard, tenantGuard } from './tenancy.js';

/** A conversation outside the caller's reach answers as absent: `-32004 Conversation not found`. */
function contextRpcError(error: unknown): unknown {
  if (isAgentRuntimeError(error, 'SESSION_NOT_FOUND')) {
    return RpcError.notFound('Conversation', String(error.data?.sessionKey ?? ''));
  }
  return error;
}

/**
 * The calling agent of a request: the agent whose id is the token's client id (an agent's
 * own token), else the default agent. It is never a parameter, so no caller names another
 * agent's conversations (docs/decisions.md).
 */
export function callingAgent(runtime: Pick<AgentRuntime, 'agents'>, context: MethodContext): string {
  return runtime.agents.list().includes(context.clientId) ? context.clientId : DEFAULT_AGENT_ID;
}

/**
 * context.*: the context-DAG browser (rpc), scoped to the calling agent and to the caller's
 * tenant (a tenant-bound token sees only `<tenant>:` conversations of its prefixes).
 */
export function contextMethods(deps: { runtime: AgentRuntime; tenants?: TenantGuard }) {
  const { runtime } = deps;
  const tenants = deps.tenants ?? tenantGuard();
  const { rpcMethod } = methodsOf('context', contextRpcError);
  return [
    rpcMethod('conversations', {
      description:
        "The calling agent's conversations, most recent first, with message and summary-node counts and DAG depth.",
      params: z
        .object({
          limit: z.number().int().min(1).max(500).optional(),
          offset: z.number().int().min(0).max(1_000_000).optional(),
        })
        .strict(),
      handler: async ({ limit, offset }, context) => {
        const agentId = callingAgent(runtime, context);
        const page = await runtime.context.conversations({
          agentId,
          keyPrefix: tenants.prefix(context),
          limit,
          offset,
        });
        // Prefix-bound tokens see only their prefixes; the tenant prefix already narrowed the query.
        const conversations = page.conversations.filter((entry) =>
          tenants.shows(context, entry.conversationId),
        );
        return { agentId, total: page.total, conversations };
      },
    }),
    rpcMethod('tree', {
      description:
        'The context DAG of one conversation: messages and summary nodes (id, kind, depth, token count, 200-character preview, child and parent ids, created at).',
      params: z.object({ conversationId: sessionKeySchema }).strict(),
      handler: ({ conversationId }, context) =>
        runtime.context.tree({
          agentId: callingAgent(runtime, context),
          conversationId,
          visible: (sessionKey) => tenants.shows(context, sessionKey),
        }),
    }),
  ];
}
