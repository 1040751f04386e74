import type { ServerResponse } from 'node:http';
import {
  agentOfModel,
  type ChatRequest,
  chatRequestSchema,
  chunkBody,
  type CompletionIds,
  completionBody,
  mapFinishReason,
  turnMessage,
  usageOf,
} from '../chat.js';
import type { ApiContext, TurnEndpoint } from './context.js';
import { openTurnStream, sessionHeader } from './chunk-stream.js';
import { toApiError } from './failure.js';
import { sendJson } from './http.js';
import { parseBody } from './zod-error.js';

/**
 * `POST /v1/chat/completions`: the last user message as one agent turn in the session the
 * request names (header, `user`) or a fresh one; answered whole or streamed.
 */
export const serveChat: TurnEndpoint = async (ctx, request, response, caller, body, signal) => {
  const chatRequest = parseBody(chatRequestSchema, body);
  const message = turnMessage(chatRequest);
  const sessionKey = await ctx.backend.session(caller, {
    header: sessionHeader(request),
    user: chatRequest.user ?? undefined,
  });
  const ids: CompletionIds = {
    id: `chatcmpl-${ctx.randomId()}`,
    created: Math.floor(ctx.now() / 1000),
    model: chatRequest.model,
  };
  const turn = { agentId: agentOfModel(chatRequest.model), message, sessionKey, signal };
  if (!chatRequest.stream) {
    const result = await ctx.backend.chat(caller, turn);
    sendJson(response, 200, completionBody(ids, result), { 'x-agentd-session': result.sessionKey });
    return;
  }
  await streamChat(ctx, response, caller, chatRequest, ids, turn);
};

/**
 * The streamed answer: a role chunk, one chunk per text delta, the finish chunk, the usage
 * chunk when asked for, then `[DONE]`. The stream opens with the first delta, so a turn that
 * fails before producing text (an unknown agent) still gets its HTTP status.
 */
async function streamChat<C>(
  ctx: ApiContext<C>,
  response: ServerResponse,
  caller: C,
  chatRequest: ChatRequest,
  ids: CompletionIds,
  turn: { agentId: string; message: string; sessionKey: string; signal: AbortSignal },
): Promise<void> {
  const include = chatRequest.stream_options?.include_usage === true;
  const { stream, signal } = openTurnStream(response, turn, ctx.maxBufferedBytes);
  const opening = () => {
    if (!stream.opened) {
      stream.send(
        chunkBody(ids, { delta: { role: 'assistant', content: '' }, finish_reason: null }, { include }),
      );
    }
  };
  try {
    const result = await ctx.backend.chat(caller, {
      ...turn,
      signal,
      onDelta: (text) => {
        if (text === '') return;
        opening();
        stream.send(chunkBody(ids, { delta: { content: text }, finish_reason: null }, { include }));
      },
    });
    opening();
    const finish = { delta: {}, finish_reason: mapFinishReason(result.finishReason) };
    stream.send(chunkBody(ids, finish, { include }, result));
    if (include) stream.send(chunkBody(ids, undefined, { include, value: usageOf(result) }));
    stream.done();
  } catch (error) {
    if (!stream.opened) throw error;
    // Once the stream is open the status is sent; OpenAI then sends the error as an event.
    stream.send(toApiError(error, ctx.logger).toBody());
    stream.done();
  }
}
