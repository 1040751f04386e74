import { z } from 'zod';
import { AgentRuntimeError } from './errors.js';
import { parseOptions } from './internal/options.js';
import { abortableDelay } from './internal/timing.js';
import type {
  ModelFinishReason,
  ModelProvider,
  ModelRequest,
  ModelStreamEvent,
  ModelUsage,
} from './provider.js';
import { estimateMessageTokens, estimateTokens, estimateToolTokens } from './tokens.js';

/** A scripted answer of the offline provider. */
export interface OfflineReply {
  /** Reply text, streamed word by word. */
  text?: string;
  /** Tool calls to make; ids are generated when absent. */
  toolCalls?: Array<{ toolName: string; input: unknown; toolCallId?: string }>;
  /** Finish reason; `tool_calls` when there are tool calls, `length` when cut at max output, else `stop`. */
  finishReason?: ModelFinishReason;
  /** Overrides of the estimated usage (e.g. cache tokens). */
  usage?: Partial<ModelUsage>;
  /** Delay before the first chunk, for timeout tests. */
  delayMs?: number;
}

/**
 * A test script: gets each request and the zero-based call number, returns the reply,
 * or `undefined` for the default offline behaviour.
 */
export type OfflineScript = (
  request: ModelRequest,
  context: { call: number },
) => OfflineReply | undefined | Promise<OfflineReply | undefined>;

/** Options of {@link createOfflineProvider}. */
export interface OfflineProviderOptions {
  /** Provider id. @default 'offline' */
  id?: string;
  /** Scripted replies for tests. @default undefined (the built-in offline behaviour) */
  script?: OfflineScript;
  /** Delay between streamed chunks. @default 0 */
  chunkDelayMs?: number;
}

const optionsSchema = z.object({
  id: z.string().min(1).default('offline'),
  script: z.function().optional(),
  chunkDelayMs: z.number().int().min(0).default(0),
});

const toolDirective = /^\/tool\s+([A-Za-z0-9_.-]+)\s*([\s\S]*)$/;

/**
 * The offline provider: no key, no network, deterministic. It says plainly that it is an
 * offline reply, estimates token usage, streams word by word, honours the output limit
 * (finishing with `length`) and can call tools: a user message `/tool <name> <json>`
 * makes it call `<name>` with that input, and after tool results it reports them.
 * Tests script it with `script`.
 */
export function createOfflineProvider(options: OfflineProviderOptions = {}): ModelProvider {
  const parsed = parseOptions(optionsSchema, options, 'createOfflineProvider');
  const script = options.script;
  let calls = 0;

  async function* stream(request: ModelRequest): AsyncIterable<ModelStreamEvent> {
    const call = calls++;
    const reply = (script ? await script(request, { call }) : undefined) ?? defaultReply(request);
    if (reply.delayMs) await abortableDelay(reply.delayMs, request.signal);
    throwIfAborted(request.signal);

    let text = reply.text ?? '';
    let finishReason: ModelFinishReason | undefined = reply.finishReason;
    text = cutAtStop(text, request.options?.stopSequences);
    const limitChars = request.maxOutputTokens * 4;
    if (text.length > limitChars) {
      text = text.slice(0, limitChars);
      finishReason ??= 'length';
    }
    for (const chunk of text.match(/\S+\s*|\s+/g) ?? []) {
      if (parsed.chunkDelayMs > 0) await abortableDelay(parsed.chunkDelayMs, request.signal);
      throwIfAborted(request.signal);
      yield { type: 'text-delta', text: chunk };
    }
    const toolCalls = (reply.toolCalls ?? []).map((toolCall, index) => ({
      toolCallId: toolCall.toolCallId ?? `offline_${request.messages.length}_${call}_${index}`,
      toolName: toolCall.toolName,
      input: toolCall.input,
    }));
    for (const toolCall of toolCalls) yield { type: 'tool-call', ...toolCall };

    let inputTokens = estimateTokens(request.system) + estimateToolTokens(request.tools);
    for (const message of request.messages) inputTokens += estimateMessageTokens(message);
    let outputTokens = estimateTokens(text);
    for (const toolCall of toolCalls)
      outputTokens += estimateTokens(JSON.stringify(toolCall.input) ?? '') + 4;
    yield {
      type: 'finish',
      finishReason: finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
      usage: {
        inputTokens: reply.usage?.inputTokens ?? inputTokens,
        outputTokens: reply.usage?.outputTokens ?? outputTokens,
        cacheReadTokens: reply.usage?.cacheReadTokens ?? 0,
        cacheWriteTokens: reply.usage?.cacheWriteTokens ?? 0,
      },
    };
  }

  return {
    id: parsed.id,
    type: 'offline',
    offline: true,
    // It writes no images' descriptions and no JSON, and calls tools only when told in the message.
    capabilities: { images: false, json: false, jsonObject: false, forcedToolChoice: false },
    stream,
    probe: async () => {},
  };
}

/** The text up to the first stop sequence, which is not included (as model APIs stop). */
function cutAtStop(text: string, stops: readonly string[] | undefined): string {
  let end = text.length;
  for (const stop of stops ?? []) {
    const at = text.indexOf(stop);
    if (at >= 0 && at < end) end = at;
  }
  return text.slice(0, end);
}

function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) {
    throw new AgentRuntimeError('PROVIDER_ERROR', 'Offline provider call aborted', { cause: signal.reason });
  }
}

function preview(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

/** The built-in behaviour: honest, deterministic, tool-capable. */
function defaultReply(request: ModelRequest): OfflineReply {
  if (request.purpose === 'probe') return { text: 'ok' };
  if (request.purpose === 'compaction') {
    const users = request.messages.filter((message) => message.role === 'user');
    const topics = users.map((message) => preview(message.content, 60)).slice(-10);
    return {
      text:
        `Summary (written by the offline provider, no language model): ${request.messages.length} earlier ` +
        `messages, ${users.length} from the user. ` +
        (topics.length > 0 ? `User messages included: ${topics.join('; ')}.` : ''),
    };
  }
  const trailingResults = [];
  for (let index = request.messages.length - 1; index >= 0; index--) {
    const message = request.messages[index];
    if (message?.role !== 'tool') break;
    trailingResults.unshift(message);
  }
  if (trailingResults.length > 0) {
    return {
      text: trailingResults
        .map(
          (result) =>
            `[offline] Tool ${result.toolName} ${result.isError ? 'failed' : 'returned'}: ${preview(result.content, 200)}`,
        )
        .join('\n'),
    };
  }
  const last = request.messages.at(-1);
  const said = last?.role === 'user' ? last.content : '';
  const directive = toolDirective.exec(said.trim());
  if (directive) {
    const [, toolName = '', rawInput = ''] = directive;
    let input: unknown = {};
    if (rawInput.trim() !== '') {
      try {
        input = JSON.parse(rawInput);
      } catch {
        return {
          text: `[offline] The /tool directive needs JSON input; could not parse: ${preview(rawInput, 80)}`,
        };
      }
    }
    return { toolCalls: [{ toolName, input }] };
  }
  return {
    text:
      '[offline] This reply comes from the offline provider: no language model is configured, so agentd ' +
      'cannot really answer. Configure providers.entries and point an agent at it to talk to a model. ' +
      `You said: "${preview(said, 200)}"`,
  };
}
