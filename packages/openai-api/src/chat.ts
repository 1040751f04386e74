import type { ClientToolCall } from '@agentd/contracts';
import type { ChatTurnResult } from './types.js';

export { type ChatRequest, chatRequestSchema, chatTurnParts } from './chat-input.js';

/** The prefix of the model ids the agents are listed under. */
export const MODEL_PREFIX = 'agentd/';

/** The agent a model id names: `agentd/<agentId>`, or a bare agent id. */
export function agentOfModel(model: string): string {
  return model.startsWith(MODEL_PREFIX) ? model.slice(MODEL_PREFIX.length) : model;
}

/**
 * The OpenAI `finish_reason` of an agent's: the four OpenAI knows pass through; a turn that
 * ended otherwise (`timeout`, `cancelled`, `error`) says `stop` here and its own reason under
 * `agentd.finishReason`, since clients switch on the closed OpenAI list.
 */
export function mapFinishReason(reason: string): 'stop' | 'length' | 'tool_calls' | 'content_filter' {
  switch (reason) {
    case 'length':
    case 'tool_calls':
    case 'content_filter':
      return reason;
    default:
      return 'stop';
  }
}

/** OpenAI's `usage` from a turn's real token counts. */
export function usageOf(result: ChatTurnResult) {
  return {
    prompt_tokens: result.tokensUsed.input,
    completion_tokens: result.tokensUsed.output,
    total_tokens: result.tokensUsed.total,
  };
}

/** What every completion and chunk of one request shares. */
export interface CompletionIds {
  id: string;
  created: number;
  model: string;
}

/** The `agentd` extension of an answer: the session to continue and the agent's own reasons. */
function extension(result: ChatTurnResult) {
  return { sessionKey: result.sessionKey, finishReason: result.finishReason, ...result.details };
}

/** The body of a non-streamed completion. */
export function completionBody(ids: CompletionIds, result: ChatTurnResult) {
  return {
    id: ids.id,
    object: 'chat.completion',
    created: ids.created,
    model: ids.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: result.toolCalls && result.response === '' ? null : result.response,
          refusal: null,
          ...(result.toolCalls
            ? { tool_calls: toolCallsOf(result.toolCalls).map(({ index: _, ...call }) => call) }
            : {}),
        },
        logprobs: null,
        finish_reason: mapFinishReason(result.finishReason),
      },
    ],
    usage: usageOf(result),
    system_fingerprint: null,
    agentd: extension(result),
  };
}

/**
 * One `chat.completion.chunk`. With `include_usage` every chunk carries `usage: null` and the
 * last one (empty `choices`) the totals, as OpenAI streams them.
 */
export function chunkBody(
  ids: CompletionIds,
  choice: { delta: Record<string, unknown>; finish_reason: string | null } | undefined,
  usage: { include: boolean; value?: ReturnType<typeof usageOf> | undefined },
  result?: ChatTurnResult,
) {
  return {
    id: ids.id,
    object: 'chat.completion.chunk',
    created: ids.created,
    model: ids.model,
    system_fingerprint: null,
    choices: choice ? [{ index: 0, ...choice, logprobs: null }] : [],
    ...(usage.include ? { usage: usage.value ?? null } : {}),
    ...(result ? { agentd: extension(result) } : {}),
  };
}

/** OpenAI's `tool_calls` of the client calls a turn ended on; `index` is for streamed deltas. */
export function toolCallsOf(calls: readonly ClientToolCall[]) {
  return calls.map((call, index) => ({
    index,
    id: call.toolCallId,
    type: 'function' as const,
    function: { name: call.toolName, arguments: JSON.stringify(call.input ?? {}) },
  }));
}
