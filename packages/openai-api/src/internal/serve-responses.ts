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
import { answerTurn, type StreamWording, turnOf } from './answer-turn.js';
import { type ChunkStream, sessionHeader } from './chunk-stream.js';
import type { TurnEndpoint } from './context.js';
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
  const turn = await turnOf(ctx, caller, asked, message, named, signal);
  const ids: ResponseIds = {
    id: responseId(ctx.randomId(), turn.sessionKey),
    messageId: `msg_${ctx.randomId().replace(/[^A-Za-z0-9]/g, '')}`,
    createdAt: Math.floor(ctx.now() / 1000),
    model: asked.model,
  };
  const streamed = asked.stream ? (stream: ChunkStream) => responseEvents(stream, ids) : undefined;
  await answerTurn(ctx, response, caller, turn, { whole: (result) => responseBody(ids, result), streamed });
};

/** The streamed Response: named events numbered by `sequence_number`; the stream ends without `[DONE]`. */
function responseEvents(stream: ChunkStream, ids: ResponseIds): StreamWording {
  let sequence = 0;
  const send = (event: Record<string, unknown>) =>
    stream.send({ ...event, sequence_number: sequence++ }, String(event.type));
  return {
    open() {
      for (const event of openingEvents(ids)) send(event);
    },
    delta(text) {
      const item = { item_id: ids.messageId, output_index: 0, content_index: 0 };
      send({ type: 'response.output_text.delta', ...item, delta: text, logprobs: [] });
    },
    finish(result) {
      for (const event of closingEvents(ids, result)) send(event);
      stream.end();
    },
    fail(failure) {
      const { code, message, param } = failure.toBody().error;
      send({ type: 'error', code, message, param });
      stream.end();
    },
  };
}
