import { agentOfModel } from '../chat.js';
import {
  closingEvents,
  openingEvents,
  type ResponseIds,
  responseBody,
  responseId,
  responsesRequestSchema,
  responseTurnMessage,
  sessionOfResponseId,
} from '../responses.js';
import type { TurnEndpoint } from './context.js';
import { openTurnStream, sessionHeader } from './chunk-stream.js';
import { toApiError } from './failure.js';
import { sendJson } from './http.js';
import { parseBody } from './zod-error.js';

/**
 * `POST /v1/responses`: one agent turn as a Response. The session is the one the
 * `previous_response_id` carries, else as for chat completions; streamed, the events run
 * `response.created` … `response.output_text.delta` … `response.completed`.
 */
export const serveResponses: TurnEndpoint = async (ctx, request, response, caller, body, signal) => {
  const asked = parseBody(responsesRequestSchema, body);
  const message = responseTurnMessage(asked);
  const named =
    asked.previous_response_id != null
      ? sessionOfResponseId(asked.previous_response_id)
      : sessionHeader(request);
  const sessionKey = await ctx.backend.session(caller, { header: named, user: asked.user ?? undefined });
  const ids: ResponseIds = {
    id: responseId(ctx.randomId(), sessionKey),
    messageId: `msg_${ctx.randomId().replace(/[^A-Za-z0-9]/g, '')}`,
    createdAt: Math.floor(ctx.now() / 1000),
    model: asked.model,
  };
  const turn = { agentId: agentOfModel(asked.model), message, sessionKey, signal };
  if (!asked.stream) {
    const result = await ctx.backend.chat(caller, turn);
    sendJson(response, 200, responseBody(ids, result), { 'x-agentd-session': result.sessionKey });
    return;
  }
  const { stream, signal: turnSignal } = openTurnStream(response, turn, ctx.maxBufferedBytes);
  let sequence = 0;
  const send = (event: Record<string, unknown>) =>
    stream.send({ ...event, sequence_number: sequence++ }, String(event.type));
  const opening = () => {
    if (!stream.opened) for (const event of openingEvents(ids)) send(event);
  };
  try {
    const result = await ctx.backend.chat(caller, {
      ...turn,
      signal: turnSignal,
      onDelta: (text) => {
        if (text === '') return;
        opening();
        const item = { item_id: ids.messageId, output_index: 0, content_index: 0 };
        send({ type: 'response.output_text.delta', ...item, delta: text, logprobs: [] });
      },
    });
    opening();
    for (const event of closingEvents(ids, result)) send(event);
    stream.end();
  } catch (error) {
    if (!stream.opened) throw error;
    const failure = toApiError(error, ctx.logger).toBody().error;
    send({ type: 'error', code: failure.code, message: failure.message, param: failure.param });
    stream.end();
  }
};
