import { randomUUID } from 'node:crypto';
import { type AgentRuntime, entityIdSchema, formatSessionKey, sessionKeySchema } from '@agentd/agent-runtime';
import type { Identity } from '@agentd/auth-scopes';
import type { MemoryStore } from '@agentd/memory-store';
import {
  type ChatTurn,
  invalidRequest,
  modelNotFound,
  OpenAiApiError,
  type OpenAiBackend,
} from '@agentd/openai-api';
import { type Dispatcher, ErrorCodes, RpcError } from '@agentd/rpc-core';
import { z } from 'zod';
import { rpcTurn } from './agent.js';
import { toRpcError } from './agent-errors.js';
import { methodsOf } from './define.js';
import { AGENT_UNAVAILABLE, PROVIDER_FAILED } from './agent-errors.js';
import type { TenantGuard } from './tenancy.js';

/** What the `/v1` backend runs on. */
export interface OpenAiBackendDeps {
  /** Runs each request's method: the scope check (`rpc`, audited), trace context and failure logging of `/rpc`. */
  dispatcher: Dispatcher;
  runtime: AgentRuntime;
  /** The memory store while `memory.enabled` is true. */
  memoryStore: () => MemoryStore | undefined;
  tenants: TenantGuard;
}

const chatParams = z
  .object({
    agentId: entityIdSchema,
    message: z.string().min(1).max(1_000_000),
    sessionKey: sessionKeySchema,
  })
  .strict();

const embedParams = z.object({ input: z.array(z.string().min(1)).min(1).max(2048) }).strict();

/**
 * The `/v1` API's backend over the daemon: each request runs as a method of scope `rpc` through
 * the gateway's dispatcher (not registered: it is an HTTP endpoint, like the chat stream), so a
 * token without `rpc`, a tenant-bound token naming another tenant's session and bad params are
 * refused and audited exactly as on `/rpc`; wire errors become OpenAI ones.
 */
export function openAiBackend(deps: OpenAiBackendDeps): OpenAiBackend<Identity> {
  const { dispatcher, runtime, tenants } = deps;
  const { rpcMethod } = methodsOf('openai', toRpcError);
  const models = rpcMethod('models', {
    description: 'The agents, as OpenAI models.',
    handler: () => runtime.agents.list().map((agentId) => ({ agentId })),
  });
  const embed = rpcMethod('embeddings', {
    description: 'Vectors of the memory embedder.',
    params: embedParams,
    handler: async ({ input }, context) => {
      const store = deps.memoryStore();
      if (!store) throw new RpcError(-32000, 'Memory is disabled (memory.enabled is false in config.yaml)');
      const vectors = await store.embedder.embed(input, { signal: context.signal });
      return { model: store.embedder.model, vectors };
    },
  });
  const chat = (turn: ChatTurn) =>
    rpcMethod('chatCompletions', {
      description: 'One agent turn for an OpenAI chat completion.',
      params: chatParams,
      handler: ({ agentId, message, sessionKey }, context) => {
        const key = tenants.session(context, sessionKey);
        const onDelta = turn.onDelta;
        return runtime.runTurn({
          ...rpcTurn(context, { message, sessionKey: key, agentId }),
          channelType: 'openai',
          ...(onDelta ? { onEvent: (event) => event.type === 'delta' && onDelta(event.text) } : {}),
        });
      },
    });
  const connection = (identity: Identity, signal?: AbortSignal) => ({
    identity,
    connectionId: randomUUID(),
    transport: 'http' as const,
    ...(signal ? { signal } : {}),
  });
  const call = <T>(run: () => Promise<unknown>, model?: string): Promise<T> =>
    run().then(
      (value) => value as T,
      (error: unknown) => {
        throw toOpenAiError(error, model);
      },
    );

  return {
    listModels: (identity) => call(() => dispatcher.invoke(models, {}, connection(identity))),
    session(identity, choice) {
      if (choice.header !== undefined) {
        if (!sessionKeySchema.safeParse(choice.header).success) {
          throw invalidRequest('x-agentd-session is not a valid session key', 'x-agentd-session');
        }
        return choice.header;
      }
      const tenantId = identity.tenant ?? 'default';
      return formatSessionKey({ tenantId, channelId: 'openai', userId: choice.user ?? randomUUID() });
    },
    async chat(identity, turn) {
      const { agentId, message, sessionKey, signal } = turn;
      const result = await call<Awaited<ReturnType<AgentRuntime['runTurn']>>>(
        () => dispatcher.invoke(chat(turn), { agentId, message, sessionKey }, connection(identity, signal)),
        `agentd/${agentId}`,
      );
      return {
        response: result.response,
        tokensUsed: result.tokensUsed,
        finishReason: result.finishReason,
        sessionKey: result.sessionKey,
        details: { endReason: result.endReason, traceId: result.traceId },
      };
    },
    embed: (identity, input, signal) =>
      call(() => dispatcher.invoke(embed, { input }, connection(identity, signal))),
  };
}

/** The OpenAI answer of a wire error of the gateway. */
function toOpenAiError(error: unknown, model: string | undefined): OpenAiApiError | unknown {
  if (!(error instanceof RpcError)) return error;
  switch (error.code) {
    case ErrorCodes.InvalidParams:
      return invalidRequest(error.message);
    case ErrorCodes.NotFound:
      return model !== undefined && error.message.startsWith('Agent not found')
        ? modelNotFound(model)
        : new OpenAiApiError(404, 'not_found_error', 'not_found', error.message);
    case AGENT_UNAVAILABLE:
      return new OpenAiApiError(409, 'invalid_request_error', 'agent_unavailable', error.message);
    case PROVIDER_FAILED:
      return new OpenAiApiError(502, 'server_error', 'provider_error', error.message);
    case -32000:
      return new OpenAiApiError(503, 'server_error', 'unavailable', error.message);
    default:
      if (error.message.startsWith('Insufficient scope')) {
        return new OpenAiApiError(403, 'permission_error', 'insufficient_scope', error.message);
      }
      return new OpenAiApiError(
        500,
        'server_error',
        'internal_error',
        'The server had an error processing the request',
      );
  }
}
