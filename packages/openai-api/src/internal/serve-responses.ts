import type { ChatTurnResult } from '../types.js';
import {
  functionCallItem,
  hasMessage,
  outputMessage,
  outputText,
  type ResponseIds,
  responseBody,
  responseId,
  responsesRequestSchema,
  responseTurnParts,
  sessionOfResponseId,
} from '../responses.js';
import { answerTurn, type StreamWording, turnOf } from './answer-turn.js';
import { type ChunkStream, sessionHeader } from './chunk-stream.js';
import type { TurnEndpoint } from './context.js';
import { parseBody } from './zod-error.js';

/**
 * `POST /v1/responses`: one agent turn as a Response. The session is the one the
 * `previous_response_id` carries, else as for chat completions; streamed, the events run
 * `response.created` … `response.output_text.delta` … (function calls) … `response.completed`.
 */
export const serveResponses: TurnEndpoint = async (ctx, request, response, caller, body, signal) => {
  const asked = parseBody(responsesRequestSchema, body);
  const parts = responseTurnParts(asked);
  const named =
    asked.previous_response_id != null
      ? sessionOfResponseId(asked.previous_response_id)
      : sessionHeader(request);
  const turn = await turnOf(ctx, caller, asked, parts, named, signal);
  const ids: ResponseIds = {
    id: responseId(ctx.randomId(), turn.sessionKey),
    messageId: `msg_${ctx.randomId().replace(/[^A-Za-z0-9]/g, '')}`,
    createdAt: Math.floor(ctx.now() / 1000),
    model: asked.model,
  };
  const streamed = asked.stream ? (stream: ChunkStream) => responseEvents(stream, ids) : undefined;
  await answerTurn(ctx, response, caller, turn, {
    whole: (result) => responseBody(ids, result),
    streamed,
    params: RESPONSES_PARAMS,
  });
};

/** The Responses fields that carry each turn field. */
const RESPONSES_PARAMS = {
  message: 'input',
  images: 'input',
  toolResults: 'input',
  tools: 'tools',
  'options.responseFormat': 'text.format',
  'options.toolChoice': 'tool_choice',
  'options.temperature': 'temperature',
  'options.topP': 'top_p',
  'options.maxOutputTokens': 'max_output_tokens',
};

/**
 * The streamed Response: named events numbered by `sequence_number`; the message item opens
 * with the first text, function calls follow it; the stream ends without `[DONE]`.
 */
function responseEvents(stream: ChunkStream, ids: ResponseIds): StreamWording {
  let sequence = 0;
  let text: string | undefined;
  const send = (event: Record<string, unknown>) =>
    stream.send({ ...event, sequence_number: sequence++ }, String(event.type));
  const part = { item_id: ids.messageId, output_index: 0, content_index: 0 };
  const openMessage = () => {
    if (text !== undefined) return;
    text = '';
    send({
      type: 'response.output_item.added',
      output_index: 0,
      item: outputMessage(ids, '', 'in_progress'),
    });
    send({ type: 'response.content_part.added', ...part, part: outputText('') });
  };
  const closeMessage = (result: ChatTurnResult) => {
    const done = text === undefined ? result.response : result.response || text;
    send({ type: 'response.output_text.done', ...part, text: done, logprobs: [] });
    send({ type: 'response.content_part.done', ...part, part: outputText(done) });
    send({ type: 'response.output_item.done', output_index: 0, item: outputMessage(ids, done, 'completed') });
  };
  return {
    open() {
      const started = responseBody(ids, undefined);
      send({ type: 'response.created', response: started });
      send({ type: 'response.in_progress', response: started });
    },
    delta(delta) {
      openMessage();
      text += delta;
      send({ type: 'response.output_text.delta', ...part, delta, logprobs: [] });
    },
    finish(result) {
      if (hasMessage(result)) openMessage();
      const first = text === undefined ? 0 : 1;
      if (text !== undefined) closeMessage(result);
      (result.toolCalls ?? []).forEach((call, index) => {
        const args = JSON.stringify(call.input ?? {});
        const item = functionCallItem(ids, call, args);
        const at = { item_id: item.id, output_index: first + index };
        send({
          type: 'response.output_item.added',
          output_index: at.output_index,
          item: { ...item, arguments: '', status: 'in_progress' },
        });
        send({ type: 'response.function_call_arguments.delta', ...at, delta: args });
        send({ type: 'response.function_call_arguments.done', ...at, arguments: args });
        send({ type: 'response.output_item.done', output_index: at.output_index, item });
      });
      const done = responseBody(ids, result);
      send({
        type: done.status === 'incomplete' ? 'response.incomplete' : 'response.completed',
        response: done,
      });
      stream.end();
    },
    fail(failure) {
      const { code, message, param } = failure.toBody().error;
      send({ type: 'error', code, message, param });
      stream.end();
    },
  };
}
