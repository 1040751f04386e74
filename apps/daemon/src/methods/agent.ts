import {
  type AgentRuntime,
  entityIdSchema,
  formatSessionKey,
  sessionKeyObjectSchema,
  sessionKeySchema,
} from '@agentd/agent-runtime';
import type { MethodContext } from '@agentd/rpc-core';
import { z } from 'zod';
import { toRpcError } from './agent-errors.js';
import { methodsOf } from './define.js';
import { type TenantGuard, tenantGuard } from './tenancy.js';

/**
 * The session key of a caller that names none (decisions.md): `default:rpc:<clientId>`, or
 * `<tenant>:rpc:<clientId>` for a tenant-bound token.
 */
export function defaultSessionKey(context: MethodContext): string {
  const tenantId = context.identity.tenant ?? 'default';
  return formatSessionKey({ tenantId, userId: context.clientId, channelId: 'rpc' });
}

/**
 * The turn an RPC caller asks for: origin `rpc`, with the call's trace id and abort signal
 * (the one request shape of agent.execute, session.send and the chat stream).
 */
export function rpcTurn(
  context: MethodContext,
  turn: { message: string; sessionKey: string; agentId?: string | undefined },
): Parameters<AgentRuntime['runTurn']>[0] {
  return {
    message: turn.message,
    sessionKey: turn.sessionKey,
    origin: 'rpc',
    traceId: context.traceId,
    signal: context.signal,
    ...(turn.agentId ? { agentId: turn.agentId } : {}),
    // A tenant-bound caller's turn recalls and writes only its tenant's memory.
    ...(context.identity.tenant !== undefined ? { memoryTenant: context.identity.tenant } : {}),
  };
}

const executeParams = z
  .object({
    message: z.string().min(1).max(1_000_000),
    agentId: entityIdSchema.optional(),
    /** The object form of the contract; the string form is accepted too. */
    sessionKey: z.union([sessionKeyObjectSchema, sessionKeySchema]).optional(),
    /** Narrows the agent's tools for this turn (names or `prefix*`). */
    scopes: z.array(z.string().min(1).max(128)).max(256).optional(),
  })
  .strict();

const turnResult = z.object({
  response: z.string(),
  tokensUsed: z.object({ input: z.number(), output: z.number(), total: z.number() }),
  finishReason: z.string(),
  sessionKey: z.string(),
  endReason: z.string(),
  steps: z.number(),
  traceId: z.string(),
});

function execute(
  runtime: AgentRuntime,
  tenants: TenantGuard,
  params: z.output<typeof executeParams>,
  context: MethodContext,
) {
  const named =
    params.sessionKey === undefined
      ? defaultSessionKey(context)
      : typeof params.sessionKey === 'string'
        ? params.sessionKey
        : formatSessionKey(params.sessionKey);
  const sessionKey = tenants.session(context, named);
  return runtime.runTurn({
    ...rpcTurn(context, { message: params.message, sessionKey, agentId: params.agentId }),
    ...(params.scopes ? { allowedTools: params.scopes } : {}),
  });
}

/** agent.*: execute, stream (non-streaming, as the contract says), cacheStats, getOperationModels. */
export function agentMethods(deps: { runtime: AgentRuntime; tenants?: TenantGuard }) {
  const { runtime } = deps;
  const tenants = deps.tenants ?? tenantGuard();
  const { rpcMethod, adminMethod } = methodsOf('agent', toRpcError);
  return [
    rpcMethod('execute', {
      description: 'Run one agent turn: the reply, token usage and finish reason.',
      params: executeParams,
      result: turnResult,
      handler: (params, context) => execute(runtime, tenants, params, context),
    }),
    rpcMethod('stream', {
      description:
        'Same as agent.execute; token streaming over JSON-RPC is not offered, use GET /api/chat/stream.',
      params: executeParams,
      result: turnResult,
      handler: (params, context) => {
        context.logger.warn(
          {
            method: 'agent.stream',
            hint: 'token streaming over JSON-RPC is not offered; use GET /api/chat/stream for deltas',
            errorKind: 'validation',
          },
          'agent.stream answered with a non-streaming result',
        );
        return execute(runtime, tenants, params, context);
      },
    }),
    adminMethod('cacheStats', {
      description: 'Prompt-cache statistics from billing: hits, misses, hit rate, cached token totals.',
      params: z.object({ agentId: entityIdSchema.optional() }).strict(),
      handler: ({ agentId }) => runtime.cacheStats(agentId),
    }),
    adminMethod('getOperationModels', {
      description: 'The model each operation of an agent uses (chat, compaction) and where it comes from.',
      params: z.object({ agentId: entityIdSchema }).strict(),
      handler: ({ agentId }) => runtime.agents.operationModels(agentId),
    }),
  ];
}
