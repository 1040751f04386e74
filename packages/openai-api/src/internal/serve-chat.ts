import {
  chatRequestSchema,
  chunkBody,
  type CompletionIds,
  completionBody,
  chatTurnParts,
  mapFinishReason,
  toolCallsOf,
  usageOf,
} from '../chat.js';
import type { ChatTurnResult } from '../types.js';
import { answerTurn, type StreamWording, turnOf } from './answer-turn.js';
import { type ChunkStream, sessionHeader } from './chunk-stream.js';
import type { TurnEndpoint } from './context.js';
import { parseBody } from './zod-error.js';

/**
 * `POST /v1/chat/completions`: the last user message (or the results of the client's tool
 * calls) as one agent turn in the session the request names (header, `user`) or a fresh one;
 * answered whole or streamed.
 */
export const serveChat: TurnEndpoint = async (ctx, request, response, caller, body, signal) => {
  const chatRequest = parseBody(chatRequestSchema, body);
  const parts = chatTurnParts(chatRequest);
  const turn = await turnOf(ctx, caller, chatRequest, parts, sessionHeader(request), signal);
  const ids: CompletionIds = {
    id: `chatcmpl-${ctx.randomId()}`,
    created: Math.floor(ctx.now() / 1000),
    model: chatRequest.model,
  };
  const include = chatRequest.stream_options?.include_usage === true;
  const streamed = chatRequest.stream ? (stream: ChunkStream) => chatChunks(stream, ids, include) : undefined;
  await answerTurn(ctx, response, caller, turn, {
    whole: (result) => completionBody(ids, result),
    streamed,
    params: CHAT_PARAMS,
  });
};

/** The chat completion fields that carry each turn field. */
const CHAT_PARAMS = {
  message: 'messages',
  images: 'messages',
  toolResults: 'messages',
  tools: 'tools',
  'options.responseFormat': 'response_format',
  'options.toolChoice': 'tool_choice',
  'options.temperature': 'temperature',
  'options.topP': 'top_p',
  'options.seed': 'seed',
  'options.stopSequences': 'stop',
  'options.maxOutputTokens': 'max_completion_tokens',
};

/**
 * The streamed answer: a role chunk, one chunk per text delta, the client's tool calls, the finish chunk, the usage
 * chunk when asked for (`include`), then `[DONE]`; a failure is sent as an error chunk.
 */
function chatChunks(stream: ChunkStream, ids: CompletionIds, include: boolean): StreamWording {
  const send = (choice: Parameters<typeof chunkBody>[1], result?: ChatTurnResult) =>
    stream.send(chunkBody(ids, choice, { include }, result));
  return {
    open: () => send({ delta: { role: 'assistant', content: '' }, finish_reason: null }),
    delta: (text) => send({ delta: { content: text }, finish_reason: null }),
    finish(result) {
      // The client's tool calls go whole in one delta, as OpenAI allows (`arguments` need not be split).
      if (result.toolCalls)
        send({ delta: { tool_calls: toolCallsOf(result.toolCalls) }, finish_reason: null });
      send({ delta: {}, finish_reason: mapFinishReason(result.finishReason) }, result);
      if (include) stream.send(chunkBody(ids, undefined, { include, value: usageOf(result) }));
      stream.done();
    },
    fail(failure) {
      stream.send(failure.toBody());
      stream.done();
    },
  };
}
