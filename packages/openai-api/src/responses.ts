import type { ClientToolCall, ClientToolResult } from '@agentd/contracts';
import { z } from 'zod';
import { functionName, jsonFormat, jsonSchemaObject, samplingFields, userContent } from './chat-input.js';
import { invalidRequest } from './errors.js';
import type { ChatTurnResult, TurnParts } from './types.js';

const inputPart = z.looseObject({
  type: z.string().max(64),
  text: z.string().optional(),
  image_url: z.string().max(20_000_000).optional(),
});

const inputItem = z.looseObject({
  type: z.string().max(64).optional(),
  role: z.enum(['system', 'developer', 'user', 'assistant']).optional(),
  content: z.union([z.string(), z.array(inputPart).max(1024)]).optional(),
  call_id: z.string().min(1).max(256).optional(),
  name: z.string().max(64).optional(),
  output: z.union([z.string().max(1_000_000), z.array(inputPart).max(1024)]).optional(),
});

const functionTool = z.looseObject({
  type: z.literal('function', { message: 'only function tools are taken' }),
  name: functionName,
  description: z.string().max(100_000).nullish(),
  parameters: jsonSchemaObject.nullish(),
  strict: z.boolean().nullish(),
});

const textFormat = z.union([
  z.looseObject({ type: z.literal('text') }),
  z.looseObject({ type: z.literal('json_object') }),
  z.looseObject({
    type: z.literal('json_schema'),
    name: z.string().min(1).max(64),
    description: z.string().max(10_000).optional(),
    schema: jsonSchemaObject,
    strict: z.boolean().nullish(),
  }),
]);

/**
 * The fields of `POST /v1/responses` that are read: `model`, `input` (text, or items: messages
 * whose last is the user's, or `function_call_output` items continuing a turn that called the
 * client's tools), `stream`, `previous_response_id`, `user`, function `tools`, `tool_choice`,
 * `text.format`, `temperature`, `top_p`, `max_output_tokens`. Others (`instructions`, `store`,
 * ...) are accepted and ignored.
 */
export const responsesRequestSchema = z.looseObject({
  model: z.string().min(1).max(256),
  input: z.union([z.string().min(1), z.array(inputItem).min(1).max(10_000)]),
  stream: z.boolean().nullish(),
  previous_response_id: z.string().min(1).max(2048).nullish(),
  user: z.string().min(1).max(256).nullish(),
  tools: z.array(functionTool).max(128).nullish(),
  tool_choice: z
    .union([
      z.enum(['auto', 'none', 'required']),
      z.looseObject({ type: z.literal('function'), name: functionName }),
    ])
    .nullish(),
  text: z.looseObject({ format: textFormat.nullish() }).nullish(),
  max_output_tokens: z.number().int().min(1).nullish(),
  ...samplingFields,
});

/** A parsed Responses request. */
export type ResponsesRequest = z.output<typeof responsesRequestSchema>;

/** What a Responses request asks of its turn: the input, the client's tools and its settings. */
export function responseTurnParts(request: ResponsesRequest): TurnParts {
  const choice = request.tool_choice;
  const format = request.text?.format;
  const tools = (request.tools ?? []).map((tool) => ({
    name: tool.name,
    description: tool.description ?? '',
    inputSchema: tool.parameters ?? { type: 'object', properties: {} },
  }));
  return {
    ...responseInput(request),
    ...(tools.length > 0 ? { tools } : {}),
    options: {
      ...(request.temperature != null ? { temperature: request.temperature } : {}),
      ...(request.top_p != null ? { topP: request.top_p } : {}),
      ...(request.max_output_tokens != null ? { maxOutputTokens: request.max_output_tokens } : {}),
      ...(choice == null
        ? {}
        : { toolChoice: typeof choice === 'string' ? choice : { toolName: choice.name } }),
      ...jsonFormat(format?.type === 'json_schema' ? format : format?.type),
    },
  };
}

/** The turn of the input: its text, the last user message, or the trailing function call outputs. */
function responseInput(request: ResponsesRequest): Pick<TurnParts, 'message' | 'images' | 'toolResults'> {
  if (typeof request.input === 'string') return { message: request.input };
  const items = request.input;
  const index = items.length - 1;
  const last = items[index];
  if (last?.type === 'function_call_output') return { message: '', toolResults: trailingOutputs(items) };
  if (last?.role !== 'user' || (last.type !== undefined && last.type !== 'message')) {
    throw invalidRequest(
      'The last input item must be a message with role "user" (the turn the agent answers) or function_call_output items',
      'input',
    );
  }
  return userContent(last.content ?? '', `input[${index}].content`, {
    text: ['input_text', 'text'],
    image: 'input_image',
  });
}

/** The `function_call_output` items ending the input: results of the last response's function calls. */
function trailingOutputs(items: z.output<typeof inputItem>[]): ClientToolResult[] {
  let first = items.length;
  while (first > 0 && items[first - 1]?.type === 'function_call_output') first--;
  return items.slice(first).map((item, offset) => {
    if (item.call_id === undefined) {
      throw invalidRequest(
        'A function_call_output item needs its call_id',
        `input[${first + offset}].call_id`,
      );
    }
    const output = item.output ?? '';
    const content =
      typeof output === 'string'
        ? output
        : output
            .filter((part) => typeof part.text === 'string')
            .map((part) => part.text)
            .join('\n');
    return { toolCallId: item.call_id, content };
  });
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

/** The `message` output item. */
export function outputMessage(ids: ResponseIds, text: string, status: 'in_progress' | 'completed') {
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

/** A `function_call` output item: a call to a client tool, for the caller to run. */
export function functionCallItem(ids: ResponseIds, call: ClientToolCall, args: string) {
  const id = `fc_${ids.messageId.slice('msg_'.length)}_${call.toolCallId.replace(/[^A-Za-z0-9_-]/g, '')}`;
  return {
    type: 'function_call',
    id,
    call_id: call.toolCallId,
    name: call.toolName,
    arguments: args,
    status: 'completed',
  };
}

/** Whether a finished turn's output has a message item: when it has text, or nothing else. */
export function hasMessage(result: ChatTurnResult): boolean {
  return result.response !== '' || !result.toolCalls || result.toolCalls.length === 0;
}

/** The output items of a finished turn: its message, then its client function calls. */
function outputItems(ids: ResponseIds, result: ChatTurnResult) {
  return [
    ...(hasMessage(result) ? [outputMessage(ids, result.response, 'completed')] : []),
    ...(result.toolCalls ?? []).map((call) => functionCallItem(ids, call, JSON.stringify(call.input ?? {}))),
  ];
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
    output: result === undefined ? [] : outputItems(ids, result),
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
