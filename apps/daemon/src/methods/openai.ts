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

// The turn's own fields (tools, results, images, options) are validated by the runtime.
const chatParams = z
  .object({
    agentId: entityIdSchema,
    message: z.string().max(1_000_000),
    sessionKey: sessionKeySchema,
    images: z.array(z.object({ url: z.string() })).optional(),
    clientTools: z.array(z.record(z.string(), z.unknown())).optional(),
    toolResults: z.array(z.record(z.string(), z.unknown())).optional(),
    callOptions: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();

const embedParams = z
  .object({
    input: z.array(z.string().min(1)).min(1).max(2048),
    dimensions: z.number().int().min(1).optional(),
  })
  .strict();

/** The turn field (of `@agentd/openai-api`'s `TurnParts`) a runtime refusal names, by its first path segments. */
const TURN_FIELDS: Record<string, string> = {
  message: 'message',
  images: 'images',
  clientTools: 'tools',
  toolResults: 'toolResults',
  'callOptions.responseFormat': 'options.responseFormat',
  'callOptions.toolChoice': 'options.toolChoice',
  'callOptions.temperature': 'options.temperature',
  'callOptions.topP': 'options.topP',
  'callOptions.seed': 'options.seed',
  'callOptions.stopSequences': 'options.stopSequences',
  'callOptions.maxOutputTokens': 'options.maxOutputTokens',
  dimensions: 'dimensions',
};

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
    handler: async ({ input, dimensions }, context) => {
      const store = deps.memoryStore();
      if (!store) throw new RpcError(-32000, 'Memory is disabled (memory.enabled is false in config.yaml)');
      const embedder =
        dimensions === undefined ? store.embedder : store.embedder.withDimensions?.(dimensions);
      if (!embedder) {
        const message = `the embedder ${store.embedder.model} makes ${store.embedder.dimensions}-dimension vectors and cannot make ${dimensions}`;
        throw RpcError.invalidParams(`Invalid params: dimensions: ${message}`, [
          { path: ['dimensions'], code: 'custom', message },
        ]);
      }
      const vectors = await embedder.embed(input, { signal: context.signal });
      return { model: embedder.model, vectors };
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
          ...clientParts(turn),
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
      const params = { agentId, message, sessionKey, ...clientParts(turn) };
      const result = await call<Awaited<ReturnType<AgentRuntime['runTurn']>>>(
        () => dispatcher.invoke(chat(turn), params, connection(identity, signal)),
        `agentd/${agentId}`,
      );
      return {
        response: result.response,
        tokensUsed: result.tokensUsed,
        finishReason: result.finishReason,
        sessionKey: result.sessionKey,
        ...(result.clientToolCalls ? { toolCalls: result.clientToolCalls } : {}),
        details: { endReason: result.endReason, traceId: result.traceId },
      };
    },
    embed: (identity, input, signal, { dimensions }) =>
      call(() =>
        dispatcher.invoke(
          embed,
          { input, ...(dimensions === undefined ? {} : { dimensions }) },
          connection(identity, signal),
        ),
      ),
  };
}

/** The runtime's turn fields of what a request brought beside its message. */
function clientParts(turn: ChatTurn) {
  return {
    ...(turn.images ? { images: turn.images } : {}),
    ...(turn.tools ? { clientTools: turn.tools } : {}),
    ...(turn.toolResults ? { toolResults: turn.toolResults } : {}),
    ...(turn.options && Object.keys(turn.options).length > 0 ? { callOptions: turn.options } : {}),
  };
}

/** The turn field a `-32602` names (its first issue's path), when it is one a request carries. */
function paramOf(error: RpcError): string | undefined {
  const issues = (error.data as { issues?: Array<{ path?: Array<string | number> }> } | undefined)?.issues;
  const path = issues?.[0]?.path ?? [];
  const [head, next] = path;
  return TURN_FIELDS[`${String(head)}.${String(next)}`] ?? TURN_FIELDS[String(head)];
}

/** The OpenAI answer of a wire error of the gateway. */
function toOpenAiError(error: unknown, model: string | undefined): OpenAiApiError | unknown {
  if (!(error instanceof RpcError)) return error;
  switch (error.code) {
    case ErrorCodes.InvalidParams:
      return invalidRequest(error.message, paramOf(error));
    case ErrorCodes.NotFound:
      return model !== undefined && error.message.startsWith('Agent not found')
        ? modelNotFound(model)
        : new OpenAiApiError(404, 'not_found_error', 'not_found', error.message);
    case AGENT_UNAVAILABLE:
      // The same code answers an agent homed on another instance (cluster mode): call that one.
      return (error.data as { code?: unknown } | undefined)?.code === 'INSTANCE_AFFINITY'
        ? new OpenAiApiError(409, 'invalid_request_error', 'instance_affinity', error.message)
        : new OpenAiApiError(409, 'invalid_request_error', 'agent_unavailable', error.message);
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
