import type { LanguageModel, LanguageModelUsage, ModelMessage as SdkMessage, ToolSet } from 'ai';
import { z } from 'zod';
import type { Injected } from '@agentd/contracts';
import { redactUrls } from '@agentd/logging';
import { AgentRuntimeError } from './errors.js';
import { type AgentRuntimeLogger, noopLogger } from './logger.js';
import { parseOptions } from './internal/options.js';
import { type AiSdk, isApiCallError, loadAiSdk } from './internal/ai-sdk.js';
import type { ToolImage } from '@agentd/contracts';
import type {
  ModelCallOptions,
  ModelFinishReason,
  ModelResponseFormat,
  ModelMessage,
  ModelProvider,
  ModelRequest,
  ModelStreamEvent,
  ModelUsage,
  ProviderCapabilities,
} from './provider.js';

/**
 * Options shared by the HTTP providers.
 * From {@link Injected}: `logger`, for retries.
 */
export interface HttpProviderOptions extends Pick<Injected<AgentRuntimeLogger>, 'logger'> {
  /** Provider id, used in errors, logs and billing. */
  id: string;
  /** Endpoint base URL (for Anthropic including `/v1`; default `https://api.anthropic.com/v1`). */
  baseUrl?: string | undefined;
  /** The resolved API key. Never logged or put into errors. */
  apiKey?: string | undefined;
  /** Extra headers for every request. */
  headers?: Record<string, string> | undefined;
  /** Time one request may take, first byte to last, its retries included. @default 120000 */
  timeoutMs?: number | undefined;
  /**
   * Retries on 408/409/429/5xx and connection failures, before any output arrived: the AI SDK's
   * own retry (backoff from 2 s, doubled; a `retry-after(-ms)` answer wins). @default 2
   */
  maxRetries?: number | undefined;
}

const optionsSchema = z.object({
  id: z.string().min(1),
  baseUrl: z.string().url().optional(),
  apiKey: z.string().min(1).optional(),
  headers: z.record(z.string(), z.string()).optional(),
  timeoutMs: z.number().int().positive().default(120_000),
  maxRetries: z.number().int().min(0).max(10).default(2),
  logger: z.custom<AgentRuntimeLogger>().optional(),
});

/**
 * A provider for any OpenAI-compatible Chat Completions endpoint (OpenAI, OpenRouter, Ollama,
 * llama.cpp server, vLLM, LM Studio), through the `ai` SDK's `@ai-sdk/openai-compatible`.
 * Streams with `stream_options.include_usage`, so usage (with cached prompt tokens) arrives.
 */
export function createOpenAiCompatibleProvider(options: HttpProviderOptions): ModelProvider {
  const parsed = parseOptions(optionsSchema, options, 'createOpenAiCompatibleProvider');
  if (!parsed.baseUrl) {
    throw new AgentRuntimeError(
      'INVALID_OPTIONS',
      `Provider ${parsed.id}: baseUrl is required for openai-compatible`,
    );
  }
  const baseURL = parsed.baseUrl;
  const languageModels = async () => {
    const { createOpenAICompatible } = await import('@ai-sdk/openai-compatible');
    const sdk = createOpenAICompatible({
      name: parsed.id,
      baseURL,
      ...(parsed.apiKey ? { apiKey: parsed.apiKey } : {}),
      ...(parsed.headers ? { headers: parsed.headers } : {}),
      includeUsage: true,
      // json_schema is sent as asked (OpenAI, vLLM, llama.cpp and Ollama take it), and image
      // URLs are handed to the endpoint rather than downloaded here.
      supportsStructuredOutputs: true,
      supportedUrls: () => ({ 'image/*': [/^https?:\/\/.+$/i] }),
    });
    return (model: string) => sdk.chatModel(model);
  };
  const baseUrl = baseURL.replace(/\/+$/, '');
  const capabilities = { images: true, json: true, jsonObject: true, forcedToolChoice: true };
  return createSdkProvider(parsed, 'openai-compatible', languageModels, capabilities, {
    url: `${baseUrl}/models`,
    headers: {
      ...(parsed.headers ?? {}),
      ...(parsed.apiKey ? { authorization: `Bearer ${parsed.apiKey}` } : {}),
    },
  });
}

/** A provider for the Anthropic Messages API, through the `ai` SDK's `@ai-sdk/anthropic`. */
export function createAnthropicProvider(options: HttpProviderOptions): ModelProvider {
  const parsed = parseOptions(optionsSchema, options, 'createAnthropicProvider');
  const baseUrl = (parsed.baseUrl ?? 'https://api.anthropic.com/v1').replace(/\/+$/, '');
  const languageModels = async () => {
    const { createAnthropic } = await import('@ai-sdk/anthropic');
    const sdk = createAnthropic({
      baseURL: baseUrl,
      // An explicit empty key keeps the SDK from reading ANTHROPIC_API_KEY behind the config's back.
      apiKey: parsed.apiKey ?? '',
      ...(parsed.headers ? { headers: parsed.headers } : {}),
    });
    return (model: string) => sdk(model);
  };
  // Anthropic has no JSON mode without a schema (the SDK would only warn): such a request is refused.
  const capabilities = { images: true, json: true, jsonObject: false, forcedToolChoice: true };
  return createSdkProvider(parsed, 'anthropic', languageModels, capabilities, {
    url: `${baseUrl}/models`,
    headers: {
      ...(parsed.headers ?? {}),
      'anthropic-version': '2023-06-01',
      ...(parsed.apiKey ? { 'x-api-key': parsed.apiKey } : {}),
    },
  });
}

type ParsedOptions = z.output<typeof optionsSchema>;

function createSdkProvider(
  options: ParsedOptions,
  type: 'openai-compatible' | 'anthropic',
  loadLanguageModels: () => Promise<(model: string) => LanguageModel>,
  capabilities: ProviderCapabilities,
  probeRequest: { url: string; headers: Record<string, string> },
): ModelProvider {
  const logger = options.logger ?? noopLogger;
  const secret = options.apiKey;
  // The SDK modules load on the first model call, not when the daemon starts (they weigh ~20 MB).
  let languageModels: Promise<(model: string) => LanguageModel> | undefined;

  async function* stream(request: ModelRequest): AsyncIterable<ModelStreamEvent> {
    languageModels ??= loadLanguageModels();
    const [ai, languageModel] = await Promise.all([loadAiSdk(), languageModels]);
    const timeout = new AbortController();
    const timer = setTimeout(
      () => timeout.abort(new DOMException('provider request timed out', 'TimeoutError')),
      options.timeoutMs,
    );
    const signal = AbortSignal.any([request.signal, timeout.signal]);
    let failure: unknown;
    try {
      const result = ai.streamText({
        // The SDK's default reports errors on console.error, which would print provider messages
        // (which may quote the key) outside the logger; errors are handled below instead.
        onError: () => {},
        model: languageModel(request.model),
        system: request.system,
        messages: toSdkMessages(request.messages),
        ...(request.tools.length > 0 ? { tools: toSdkTools(ai, request.tools) } : {}),
        ...callSettings(ai, request.options),
        maxOutputTokens: request.maxOutputTokens,
        // The SDK's own retry: it repeats the request until the answer starts streaming (never
        // after output), on 408/409/429/5xx and connection failures, with exponential backoff
        // from 2 s that a `retry-after-ms` / `retry-after` (seconds or HTTP date) answer overrides.
        maxRetries: options.maxRetries,
        abortSignal: signal,
      });
      for await (const part of result.fullStream) {
        if (part.type === 'text-delta') {
          if (part.text.length === 0) continue;
          yield { type: 'text-delta', text: part.text };
        } else if (part.type === 'tool-call') {
          yield {
            type: 'tool-call',
            toolCallId: part.toolCallId,
            toolName: part.toolName,
            input: part.input,
          };
        } else if (part.type === 'finish') {
          yield {
            type: 'finish',
            finishReason: mapFinishReason(part.finishReason),
            usage: mapUsage(part.totalUsage),
          };
          return;
        } else if (part.type === 'error') {
          failure = part.error;
          break;
        } else if (part.type === 'abort') {
          failure = signal.reason ?? new DOMException('aborted', 'AbortError');
          break;
        }
      }
      failure ??= new AgentRuntimeError(
        'PROVIDER_ERROR',
        `Provider ${options.id}: stream ended without a finish event`,
        {
          data: { provider: options.id },
        },
      );
    } catch (error) {
      // Aborts and transport failures surface as throws from the stream rather than error parts.
      failure = error;
    } finally {
      clearTimeout(timer);
    }
    if (request.signal.aborted) throw request.signal.reason;
    if (timeout.signal.aborted) {
      throw new AgentRuntimeError(
        'PROVIDER_TIMEOUT',
        `Provider ${options.id}: request exceeded ${options.timeoutMs} ms`,
        { data: { provider: options.id, timeoutMs: options.timeoutMs } },
      );
    }
    const last = lastAttemptError(failure);
    if (last !== failure) {
      logger.warn(
        {
          provider: options.id,
          attempts: options.maxRetries + 1,
          status: statusOf(last),
          hint: 'the provider kept failing or rate-limiting through every retry; check its status or raise maxRetries',
          errorKind: 'dependency',
        },
        'model request failed after retries',
      );
    }
    throw mapError(options.id, last, secret);
  }

  async function probe(signal: AbortSignal): Promise<void> {
    const timeout = AbortSignal.timeout(Math.min(options.timeoutMs, 15_000));
    let response: Response;
    try {
      response = await fetch(probeRequest.url, {
        headers: probeRequest.headers,
        signal: AbortSignal.any([signal, timeout]),
      });
    } catch (error) {
      throw new AgentRuntimeError('PROVIDER_ERROR', `Provider ${options.id}: probe could not connect`, {
        data: { provider: options.id, reason: error instanceof Error ? error.name : 'unknown' },
      });
    }
    await response.body?.cancel();
    if (response.status === 401 || response.status === 403) {
      throw new AgentRuntimeError(
        'PROVIDER_AUTH',
        `Provider ${options.id}: credential refused (HTTP ${response.status})`,
        {
          data: { provider: options.id, status: response.status },
        },
      );
    }
    if (!response.ok) {
      throw new AgentRuntimeError(
        'PROVIDER_ERROR',
        `Provider ${options.id}: probe answered HTTP ${response.status}`,
        {
          data: { provider: options.id, status: response.status },
        },
      );
    }
  }

  return { id: options.id, type, offline: false, capabilities, stream, probe };
}

/**
 * The messages in the AI SDK's shape. Images a tool attached follow its results as a user
 * message of image parts: OpenAI-compatible tool messages carry text only (the SDK would send
 * the parts as JSON text), and every vision model reads images in a user message.
 */
function toSdkMessages(messages: readonly ModelMessage[]): SdkMessage[] {
  const out: SdkMessage[] = [];
  let images: Array<{ toolName: string; image: ToolImage }> = [];
  const flushImages = () => {
    if (images.length === 0) return;
    out.push({
      role: 'user',
      content: [
        {
          type: 'text',
          text: `Images from ${[...new Set(images.map((entry) => entry.toolName))].join(', ')}:`,
        },
        ...images.map(({ image }) => ({
          type: 'image' as const,
          image: image.data,
          mediaType: image.mediaType,
        })),
      ],
    });
    images = [];
  };
  for (const message of messages) {
    if (message.role !== 'tool') flushImages();
    if (message.role === 'user') {
      const images = message.images ?? [];
      out.push({
        role: 'user',
        content:
          images.length === 0
            ? message.content
            : [
                ...(message.content ? [{ type: 'text' as const, text: message.content }] : []),
                ...images.map((image) => ({ type: 'image' as const, image: new URL(image.url) })),
              ],
      });
    } else if (message.role === 'assistant') {
      if (!message.toolCalls || message.toolCalls.length === 0) {
        out.push({ role: 'assistant', content: message.content });
        continue;
      }
      out.push({
        role: 'assistant',
        content: [
          ...(message.content ? [{ type: 'text' as const, text: message.content }] : []),
          ...message.toolCalls.map((call) => ({
            type: 'tool-call' as const,
            toolCallId: call.toolCallId,
            toolName: call.toolName,
            input: call.input,
          })),
        ],
      });
    } else {
      for (const image of message.images ?? []) images.push({ toolName: message.toolName, image });
      out.push({
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: message.toolCallId,
            toolName: message.toolName,
            output: message.isError
              ? { type: 'error-text', value: message.content }
              : { type: 'text', value: message.content },
          },
        ],
      });
    }
  }
  flushImages();
  return out;
}

/** The SDK's call settings of the caller's options: sampling, stop, seed, tool choice, output shape. */
function callSettings(ai: AiSdk, options: ModelCallOptions | undefined) {
  if (!options) return {};
  const { responseFormat, toolChoice } = options;
  return {
    ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
    ...(options.topP !== undefined ? { topP: options.topP } : {}),
    ...(options.stopSequences !== undefined ? { stopSequences: options.stopSequences } : {}),
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
    ...(toolChoice === undefined
      ? {}
      : {
          toolChoice:
            typeof toolChoice === 'string'
              ? toolChoice
              : { type: 'tool' as const, toolName: toolChoice.toolName },
        }),
    ...(responseFormat?.type === 'json' ? { output: jsonOutput(ai, responseFormat) } : {}),
  };
}

/** The SDK's JSON output: held to the schema when one is given, else any JSON object. */
function jsonOutput(ai: AiSdk, format: Extract<ModelResponseFormat, { type: 'json' }>) {
  const named = {
    ...(format.name ? { name: format.name } : {}),
    ...(format.description ? { description: format.description } : {}),
  };
  if (!format.schema) return ai.Output.json(named);
  const schema = ai.jsonSchema(format.schema as Parameters<AiSdk['jsonSchema']>[0]);
  return ai.Output.object({ schema, ...named });
}

function toSdkTools(ai: AiSdk, tools: ModelRequest['tools']): ToolSet {
  const set: ToolSet = {};
  for (const spec of tools) {
    set[spec.name] = ai.tool({
      description: spec.description,
      inputSchema: ai.jsonSchema(spec.inputSchema as Parameters<AiSdk['jsonSchema']>[0]),
    });
  }
  return set;
}

/** The AI SDK's finish reasons in the contract's spelling; any other reason is `other`. */
const FINISH_REASONS: ReadonlyMap<string, ModelFinishReason> = new Map([
  ['stop', 'stop'],
  ['length', 'length'],
  ['tool-calls', 'tool_calls'],
  ['content-filter', 'content_filter'],
  ['error', 'error'],
]);

function mapFinishReason(reason: string): ModelFinishReason {
  return FINISH_REASONS.get(reason) ?? 'other';
}

function mapUsage(usage: LanguageModelUsage): ModelUsage {
  return {
    inputTokens: usage.inputTokens ?? 0,
    outputTokens: usage.outputTokens ?? 0,
    cacheReadTokens: usage.inputTokenDetails?.cacheReadTokens ?? 0,
    cacheWriteTokens: usage.inputTokenDetails?.cacheWriteTokens ?? 0,
  };
}

function statusOf(error: unknown): number | undefined {
  return isApiCallError(error) ? error.statusCode : undefined;
}

/** The SDK wraps the failures of a retried request in a RetryError: the last one is what happened. */
function lastAttemptError(error: unknown): unknown {
  if (error instanceof Error && error.name === 'AI_RetryError' && 'lastError' in error)
    return error.lastError;
  return error;
}

/** A provider message as a caller or the log may see it: the key and any URL credentials masked. */
function scrub(text: string, secret: string | undefined): string {
  return redactUrls(secret ? text.split(secret).join('[REDACTED]') : text);
}

/**
 * Turns an SDK failure into an AgentRuntimeError. The SDK's error objects carry request
 * bodies (conversation text) and response bodies, so none is attached as `cause`: the
 * message names the provider, status and a scrubbed short reason only.
 */
function mapError(providerId: string, error: unknown, secret: string | undefined): AgentRuntimeError {
  if (error instanceof AgentRuntimeError) return error;
  if (isApiCallError(error)) {
    const status = error.statusCode;
    const data = { provider: providerId, status, retryable: error.isRetryable };
    if (status === 401 || status === 403) {
      return new AgentRuntimeError(
        'PROVIDER_AUTH',
        `Provider ${providerId}: credential refused (HTTP ${status})`,
        {
          data,
        },
      );
    }
    if (status === 429) {
      return new AgentRuntimeError(
        'PROVIDER_RATE_LIMITED',
        `Provider ${providerId}: rate limited (HTTP 429)`,
        { data },
      );
    }
    const reason = status === undefined ? scrub(error.message, secret).slice(0, 160) : `HTTP ${status}`;
    return new AgentRuntimeError('PROVIDER_ERROR', `Provider ${providerId}: request failed: ${reason}`, {
      data,
    });
  }
  const name = error instanceof Error ? error.name : typeof error;
  const message = error instanceof Error ? scrub(error.message, secret).slice(0, 160) : '';
  if (name === 'LoadAPIKeyError') {
    return new AgentRuntimeError('PROVIDER_AUTH', `Provider ${providerId}: no API key configured`, {
      data: { provider: providerId },
    });
  }
  return new AgentRuntimeError(
    'PROVIDER_ERROR',
    `Provider ${providerId}: ${name}${message ? `: ${message}` : ''}`,
    {
      data: { provider: providerId, errorName: name },
    },
  );
}
