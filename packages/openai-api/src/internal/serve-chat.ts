import {
  chatRequestSchema,
  chunkBody,
  type CompletionIds,
  completionBody,
  mapFinishReason,
  turnMessage,
  usageOf,
} from '../chat.js';
import type { ChatTurnResult } from '../types.js';
import { answerTurn, type StreamWording, turnOf } from './answer-turn.js';
import { type ChunkStream, sessionHeader } from './chunk-stream.js';
import type { TurnEndpoint } from './context.js';
import { parseBody } from './zod-error.js';

/**
 * `POST /v1/chat/completions`: the last user message as one agent turn in the session the
 * request names (header, `user`) or a fresh one; answered whole or streamed.
 */
export const serveChat: TurnEndpoint = async (ctx, request, response, caller, body, signal) => {
  const chatRequest = parseBody(chatRequestSchema, body);
  const message = turnMessage(chatRequest);
  const turn = await turnOf(ctx, caller, chatRequest, message, sessionHeader(request), signal);
  const ids: CompletionIds = {
    id: `chatcmpl-${ctx.randomId()}`,
    created: Math.floor(ctx.now() / 1000),
    model: chatRequest.model,
  };
  const include = chatRequest.stream_options?.include_usage === true;
  const streamed = chatRequest.stream ? (stream: ChunkStream) => chatChunks(stream, ids, include) : undefined;
  await answerTurn(ctx, response, caller, turn, { whole: (result) => completionBody(ids, result), streamed });
};

/**
 * The streamed answer: a role chunk, one chunk per text delta, the finish chunk, the usage
 * chunk when asked for (`include`), then `[DONE]`; a failure is sent as an error chunk.
 */
function chatChunks(stream: ChunkStream, ids: CompletionIds, include: boolean): StreamWording {
  const send = (choice: Parameters<typeof chunkBody>[1], result?: ChatTurnResult) =>
    stream.send(chunkBody(ids, choice, { include }, result));
  return {
    open: () => send({ delta: { role: 'assistant', content: '' }, finish_reason: null }),
    delta: (text) => send({ delta: { content: text }, finish_reason: null }),
    finish(result) {
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
