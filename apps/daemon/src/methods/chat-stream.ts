import { type AgentRuntime, entityIdSchema, sessionKeySchema } from '@agentd/agent-runtime';
import type { SseWriter } from '@agentd/rpc-core';
import { z } from 'zod';
import { defaultSessionKey, rpcTurn } from './agent.js';
import { type TenantGuard, tenantGuard } from './tenancy.js';
import { toRpcError } from './agent-errors.js';
import { methodsOf } from './define.js';

const queryParams = z
  .object({
    message: z.string().min(1).max(100_000),
    agentId: entityIdSchema.optional(),
    sessionKey: sessionKeySchema.optional(),
    /** The bearer token, for clients (EventSource) that cannot set a header; read by authentication. */
    token: z.string().optional(),
  })
  .strict();

/**
 * `GET /api/chat/stream?message=…[&agentId=…][&sessionKey=…]`: one agent turn as server-sent
 * events (`start`, `delta`, `tool`, then `done` or `error`); served by rpc-core's
 * `createSseRpcHandler`, so it takes the `/rpc` path for scope, params and errors. Not in
 * `rpc.discover`: it is an HTTP endpoint, not a JSON-RPC method. Event format: docs/chat-stream.md.
 */
export function chatStreamMethod(
  deps: { runtime: AgentRuntime; tenants?: TenantGuard },
  open: () => SseWriter,
) {
  const tenants = deps.tenants ?? tenantGuard();
  const { rpcMethod } = methodsOf('http', toRpcError);
  return rpcMethod('chatStream', {
    description: 'One agent turn as server-sent events.',
    params: queryParams,
    handler: ({ message, agentId, sessionKey }, context) => {
      const key = tenants.session(context, sessionKey ?? defaultSessionKey(context));
      const sse = open();
      sse.send({
        event: 'start',
        data: { sessionKey: key, agentId: agentId ?? null, traceId: context.traceId },
      });
      let sequence = 0;
      return deps.runtime.runTurn({
        ...rpcTurn(context, { message, sessionKey: key, agentId }),
        onEvent: (event) => {
          sequence++;
          if (event.type === 'delta') {
            sse.send({ event: 'delta', id: sequence, data: { text: event.text, step: event.step } });
            return;
          }
          const { toolName, toolCallId, step } = event;
          sse.send({
            event: 'tool',
            id: sequence,
            data:
              event.type === 'tool-call'
                ? { phase: 'call', toolName, toolCallId, step }
                : {
                    phase: 'result',
                    toolName,
                    toolCallId,
                    ok: event.ok,
                    durationMs: event.durationMs,
                    step,
                  },
          });
        },
      });
    },
  });
}
