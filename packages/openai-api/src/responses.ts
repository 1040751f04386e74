import { z } from 'zod';
import { invalidRequest } from './errors.js';
import type { ChatTurnResult } from './types.js';

const inputPart = z.looseObject({ type: z.string().max(64), text: z.string().optional() });

const inputItem = z.looseObject({
  type: z.string().max(64).optional(),
  role: z.enum(['system', 'developer', 'user', 'assistant']).optional(),
  content: z.union([z.string(), z.array(inputPart).max(1024)]).optional(),
});

/**
 * The fields of `POST /v1/responses` that are read: `model`, `input` (text, or message items
 * whose last is the user's), `stream`, `previous_response_id` and `user`. Others
 * (`instructions`, `tools`, `temperature`, `store`, ...) are accepted and ignored.
 */
export const responsesRequestSchema = z.looseObject({
  model: z.string().min(1).max(256),
  input: z.union([z.string().min(1), z.array(inputItem).min(1).max(10_000)]),
  stream: z.boolean().nullish(),
  previous_response_id: z.string().min(1).max(2048).nullish(),
  user: z.string().min(1).max(256).nullish(),
});

/** A parsed Responses request. */
export type ResponsesRequest = z.output<typeof responsesRequestSchema>;

/** The turn of a Responses request: the input text, or the text of its last item, which must be the user's. */
export function responseTurnMessage(request: ResponsesRequest): string {
  if (typeof request.input === 'string') return request.input;
  const index = request.input.length - 1;
  const last = request.input[index];
  if (last?.role !== 'user' || (last.type !== undefined && last.type !== 'message')) {
    throw invalidRequest(
      'The last input item must be a message with role "user": it is the turn the agent answers',
      'input',
    );
  }
  const content = last.content ?? '';
  const text =
    typeof content === 'string'
      ? content
      : content
          .filter(
            (part) => (part.type === 'input_text' || part.type === 'text') && typeof part.text === 'string',
          )
          .map((part) => part.text)
          .join('\n');
  if (text.trim() === '')
    throw invalidRequest('The last user message has no text', `input[${index}].content`);
  return text;
}

/**
 * A response id carries its session, so `previous_response_id` continues that conversation
 * without agentd storing responses: `resp_<random>.<session key, base64url>`. Naming a session
 * this way grants nothing: the key is checked like one named in `x-agentd-session`.
 */
export function responseId(random: string, sessionKey: string): string {
  return `resp_${random.replace(/[^A-Za-z0-9]/g, '')}.${Buffer.from(sessionKey, 'utf8').toString('base64url')}`;
}

/** The session key a response id carries. */
export function sessionOfResponseId(id: string): string {
  const dot = id.indexOf('.');
  const encoded = id.startsWith('resp_') && dot > 0 ? id.slice(dot + 1) : '';
  const key = /^[A-Za-z0-9_-]+$/.test(encoded) ? Buffer.from(encoded, 'base64url').toString('utf8') : '';
  if (key === '')
    throw invalidRequest('previous_response_id is not a response id of this server', 'previous_response_id');
  return key;
}

/** What one response's objects share. */
export interface ResponseIds {
  id: string;
  messageId: string;
  createdAt: number;
  model: string;
}

function outputMessage(ids: ResponseIds, text: string, status: 'in_progress' | 'completed') {
  return {
    type: 'message',
    id: ids.messageId,
    status,
    role: 'assistant',
    content: status === 'completed' ? [outputText(text)] : [],
  };
}

/** An `output_text` content part. */
export function outputText(text: string) {
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}

/**
 * A Response object: `in_progress` with no output while streaming starts, else the finished
 * turn. A turn cut at its output limit is `incomplete` (`max_output_tokens`), as OpenAI says it.
 */
export function responseBody(ids: ResponseIds, result: ChatTurnResult | undefined) {
  const incomplete = result?.finishReason === 'length';
  return {
    id: ids.id,
    object: 'response',
    created_at: ids.createdAt,
    status: result === undefined ? 'in_progress' : incomplete ? 'incomplete' : 'completed',
    error: null,
    incomplete_details: incomplete ? { reason: 'max_output_tokens' } : null,
    instructions: null,
    model: ids.model,
    output: result === undefined ? [] : [outputMessage(ids, result.response, 'completed')],
    parallel_tool_calls: false,
    tool_choice: 'auto',
    tools: [],
    usage:
      result === undefined
        ? null
        : {
            input_tokens: result.tokensUsed.input,
            input_tokens_details: { cached_tokens: 0 },
            output_tokens: result.tokensUsed.output,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: result.tokensUsed.total,
          },
    ...(result === undefined
      ? {}
      : { agentd: { sessionKey: result.sessionKey, finishReason: result.finishReason, ...result.details } }),
  };
}

/** The opening events of a streamed response, before the first text delta. */
export function openingEvents(ids: ResponseIds): Array<Record<string, unknown>> {
  const item = { item_id: ids.messageId, output_index: 0, content_index: 0 };
  return [
    { type: 'response.created', response: responseBody(ids, undefined) },
    { type: 'response.in_progress', response: responseBody(ids, undefined) },
    { type: 'response.output_item.added', output_index: 0, item: outputMessage(ids, '', 'in_progress') },
    { type: 'response.content_part.added', ...item, part: outputText('') },
  ];
}

/** The closing events of a streamed response, once the turn is done. */
export function closingEvents(ids: ResponseIds, result: ChatTurnResult): Array<Record<string, unknown>> {
  const item = { item_id: ids.messageId, output_index: 0, content_index: 0 };
  const done = responseBody(ids, result);
  return [
    { type: 'response.output_text.done', ...item, text: result.response, logprobs: [] },
    { type: 'response.content_part.done', ...item, part: outputText(result.response) },
    {
      type: 'response.output_item.done',
      output_index: 0,
      item: outputMessage(ids, result.response, 'completed'),
    },
    { type: done.status === 'incomplete' ? 'response.incomplete' : 'response.completed', response: done },
  ];
}
