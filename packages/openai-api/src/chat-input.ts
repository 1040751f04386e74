import type { ClientToolResult, ClientToolSpec, TurnImage, TurnResponseFormat } from '@agentd/contracts';
import { z } from 'zod';
import { invalidRequest } from './errors.js';
import type { TurnParts } from './types.js';

/** A function name as OpenAI takes it. */
export const functionName = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ and - (1 to 64)');

/** A JSON Schema object (kept as given; the model provider reads it). */
export const jsonSchemaObject = z.record(z.string(), z.unknown());

const imageUrl = z.union([
  z.string().min(1).max(20_000_000),
  z.looseObject({ url: z.string().min(1).max(20_000_000), detail: z.string().max(16).optional() }),
]);

/** A content part: text and images are taken; other types (audio, files) are refused by name. */
const contentPart = z.looseObject({
  type: z.string().max(64),
  text: z.string().optional(),
  image_url: imageUrl.optional(),
});

const toolCall = z.looseObject({
  id: z.string().min(1).max(256),
  type: z.literal('function').optional(),
  function: z.looseObject({ name: functionName, arguments: z.string().max(1_000_000) }),
});

const message = z.looseObject({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool', 'function']),
  content: z.union([z.string(), z.array(contentPart).max(1024), z.null()]).optional(),
  name: z.string().max(256).optional(),
  tool_calls: z.array(toolCall).max(128).nullish(),
  tool_call_id: z.string().min(1).max(256).optional(),
});

/** OpenAI's function tool: `{type: 'function', function: {name, description, parameters}}`. */
const functionTool = z.looseObject({
  type: z.literal('function', { message: 'only function tools are taken' }),
  function: z.looseObject({
    name: functionName,
    description: z.string().max(100_000).optional(),
    parameters: jsonSchemaObject.optional(),
    strict: z.boolean().nullish(),
  }),
});

const toolChoice = z.union([
  z.enum(['auto', 'none', 'required']),
  z.looseObject({ type: z.literal('function'), function: z.looseObject({ name: functionName }) }),
]);

const responseFormat = z.union([
  z.looseObject({ type: z.literal('text') }),
  z.looseObject({ type: z.literal('json_object') }),
  z.looseObject({
    type: z.literal('json_schema'),
    json_schema: z.looseObject({
      name: z.string().min(1).max(64),
      description: z.string().max(10_000).optional(),
      schema: jsonSchemaObject.optional(),
      strict: z.boolean().nullish(),
    }),
  }),
]);

/** The sampling fields both endpoints share, in OpenAI's names. */
export const samplingFields = {
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  seed: z.number().int().nullish(),
};

/**
 * The fields of `POST /v1/chat/completions` that are read. Fields not listed (penalties,
 * `logit_bias`, `logprobs`) are accepted and ignored.
 */
export const chatRequestSchema = z.looseObject({
  model: z.string().min(1).max(256),
  messages: z.array(message).min(1).max(10_000),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().nullish() }).nullish(),
  user: z.string().min(1).max(256).nullish(),
  n: z.number().int().min(1).max(1).nullish(),
  tools: z.array(functionTool).max(128).nullish(),
  tool_choice: toolChoice.nullish(),
  response_format: responseFormat.nullish(),
  max_tokens: z.number().int().min(1).nullish(),
  max_completion_tokens: z.number().int().min(1).nullish(),
  stop: z.union([z.string().min(1), z.array(z.string().min(1)).max(4)]).nullish(),
  ...samplingFields,
});

/** A parsed chat completion request. */
export type ChatRequest = z.output<typeof chatRequestSchema>;

/** The client tools of a request, in the turn's shape. */
export function clientTools(
  tools: z.output<typeof functionTool>[] | null | undefined,
): ClientToolSpec[] | undefined {
  if (!tools || tools.length === 0) return undefined;
  return tools.map((tool) => ({
    name: tool.function.name,
    description: tool.function.description ?? '',
    inputSchema: tool.function.parameters ?? { type: 'object', properties: {} },
  }));
}

/**
 * What a chat completion asks of its turn: the last user message (text and images), or, when
 * the conversation ends in `tool` messages, their results, which continue the turn that called
 * the client's tools; plus the client's tools and its sampling and format settings.
 */
export function chatTurnParts(request: ChatRequest): TurnParts {
  const choice = request.tool_choice;
  const format = request.response_format;
  const maxOutputTokens = request.max_completion_tokens ?? request.max_tokens ?? undefined;
  const stop = typeof request.stop === 'string' ? [request.stop] : (request.stop ?? undefined);
  const tools = clientTools(request.tools);
  return {
    ...lastMessageParts(request),
    ...(tools ? { tools } : {}),
    options: {
      ...(request.temperature != null ? { temperature: request.temperature } : {}),
      ...(request.top_p != null ? { topP: request.top_p } : {}),
      ...(request.seed != null ? { seed: request.seed } : {}),
      ...(stop ? { stopSequences: stop } : {}),
      ...(maxOutputTokens !== undefined ? { maxOutputTokens } : {}),
      ...(choice == null
        ? {}
        : { toolChoice: typeof choice === 'string' ? choice : { toolName: choice.function.name } }),
      ...jsonFormat(format?.type === 'json_schema' ? format.json_schema : format?.type),
    },
  };
}

/**
 * The turn's `responseFormat` of a request's JSON format: `json_object` asks for any JSON
 * object, a named schema for JSON held to it; `text` or none asks for nothing.
 */
export function jsonFormat(
  format:
    | {
        name: string;
        description?: string | null | undefined;
        schema?: Record<string, unknown> | null | undefined;
      }
    | string
    | null
    | undefined,
): { responseFormat?: TurnResponseFormat } {
  if (format === 'json_object') return { responseFormat: { type: 'json' } };
  if (format == null || typeof format === 'string') return {};
  return {
    responseFormat: {
      type: 'json',
      name: format.name,
      ...(format.description ? { description: format.description } : {}),
      ...(format.schema ? { schema: format.schema } : {}),
    },
  };
}

/** The turn's message, images or tool results, from the conversation's end. */
function lastMessageParts(request: ChatRequest): Pick<TurnParts, 'message' | 'images' | 'toolResults'> {
  const { messages } = request;
  const lastIndex = messages.length - 1;
  const last = messages[lastIndex];
  if (last?.role === 'tool') return { message: '', toolResults: trailingToolResults(messages) };
  if (last?.role !== 'user') {
    throw invalidRequest(
      'The last message must have role "user" (the turn the agent answers) or "tool" (results of the tool calls of the last answer)',
      'messages',
    );
  }
  return userContent(last.content ?? '', `messages[${lastIndex}].content`, {
    text: ['text'],
    image: 'image_url',
  });
}

/** A user message's content part, as either endpoint spells it. */
interface UserPart {
  type: string;
  text?: string | undefined;
  image_url?: z.output<typeof imageUrl> | undefined;
}

/**
 * The text and images of the user message that is the turn; a part of another type (audio,
 * files) answers 400 naming it, and a message with neither text nor image is refused.
 */
export function userContent(
  content: string | UserPart[],
  where: string,
  kinds: { text: string[]; image: string },
): Pick<TurnParts, 'message' | 'images'> {
  if (typeof content === 'string') {
    if (content.trim() === '') throw invalidRequest('The last user message is empty', where);
    return { message: content };
  }
  const texts: string[] = [];
  const images: TurnImage[] = [];
  content.forEach((part, index) => {
    const at = `${where}[${index}]`;
    if (kinds.text.includes(part.type) && typeof part.text === 'string') texts.push(part.text);
    else if (part.type === kinds.image && part.image_url !== undefined) {
      images.push({ url: imageUrlOf(part.image_url, `${at}.image_url`) });
    } else {
      throw invalidRequest(
        `Content parts of type ${part.type} are not taken: send ${kinds.text[0]} or ${kinds.image}`,
        `${at}.type`,
      );
    }
  });
  const message = texts.join('\n');
  if (message.trim() === '' && images.length === 0) {
    throw invalidRequest('The last user message has neither text nor an image', where);
  }
  return { message, ...(images.length > 0 ? { images } : {}) };
}

/** An image URL the model can be given: `http(s):` or a base64 `data:image/...` URL. */
export function imageUrlOf(value: z.output<typeof imageUrl>, param: string): string {
  const url = typeof value === 'string' ? value : value.url;
  if (!/^https?:\/\/\S+$/i.test(url) && !/^data:image\/[a-z0-9.+-]+;base64,[A-Za-z0-9+/=\s]+$/i.test(url)) {
    throw invalidRequest('An image must be an http(s) URL or a base64 data:image/... URL', param);
  }
  return url;
}

/**
 * The `tool` messages that end the conversation, each named by the function the assistant
 * message before them called under that id.
 */
function trailingToolResults(messages: ChatRequest['messages']): ClientToolResult[] {
  let first = messages.length;
  while (first > 0 && messages[first - 1]?.role === 'tool') first--;
  const calls = messages[first - 1]?.tool_calls ?? [];
  return messages.slice(first).map((message, offset) => {
    const index = first + offset;
    const call = calls.find((candidate) => candidate.id === message.tool_call_id);
    if (!call) {
      throw invalidRequest(
        'A tool message must answer a tool call of the assistant message before it',
        `messages[${index}].tool_call_id`,
      );
    }
    const content = message.content ?? '';
    const text =
      typeof content === 'string'
        ? content
        : content
            .filter((part) => part.type === 'text' && typeof part.text === 'string')
            .map((part) => part.text)
            .join('\n');
    return { toolCallId: call.id, content: text };
  });
}
