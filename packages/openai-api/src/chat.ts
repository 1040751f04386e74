import { z } from 'zod';
import { invalidRequest } from './errors.js';
import type { ChatTurnResult } from './types.js';

/** A content part; only text parts carry a turn (images and audio are not taken). */
const contentPart = z.looseObject({ type: z.string().max(64), text: z.string().optional() });

const message = z.looseObject({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool', 'function']),
  content: z.union([z.string(), z.array(contentPart).max(1024), z.null()]).optional(),
  name: z.string().max(256).optional(),
});

/**
 * The fields of `POST /v1/chat/completions` that are read. Other OpenAI fields (temperature,
 * tools, ...) are accepted and ignored: the agent's own configuration decides them.
 */
export const chatRequestSchema = z.looseObject({
  model: z.string().min(1).max(256),
  messages: z.array(message).min(1).max(10_000),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().nullish() }).nullish(),
  user: z.string().min(1).max(256).nullish(),
  n: z.number().int().min(1).max(1).nullish(),
});

/** A parsed chat completion request. */
export type ChatRequest = z.output<typeof chatRequestSchema>;

/** The prefix of the model ids the agents are listed under. */
export const MODEL_PREFIX = 'agentd/';

/** The agent a model id names: `agentd/<agentId>`, or a bare agent id. */
export function agentOfModel(model: string): string {
  return model.startsWith(MODEL_PREFIX) ? model.slice(MODEL_PREFIX.length) : model;
}

/**
 * The turn of a request: the text of its last message, which must be the user's. Earlier
 * messages are not replayed; the agent's session holds the conversation.
 */
export function turnMessage(request: ChatRequest): string {
  const last = request.messages[request.messages.length - 1];
  if (last?.role !== 'user') {
    throw invalidRequest(
      'The last message must have role "user": it is the turn the agent answers',
      'messages',
    );
  }
  const content = last.content;
  const text =
    typeof content === 'string'
      ? content
      : (content ?? [])
          .filter((part) => part.type === 'text' && typeof part.text === 'string')
          .map((part) => part.text)
          .join('\n');
  if (text.trim() === '') {
    throw invalidRequest(
      'The last user message has no text',
      `messages[${request.messages.length - 1}].content`,
    );
  }
  return text;
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
        message: { role: 'assistant', content: result.response, refusal: null },
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
