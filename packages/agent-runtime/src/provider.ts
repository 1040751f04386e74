import type {
  ToolImage,
  TurnCallOptions,
  TurnImage,
  TurnResponseFormat,
  TurnToolChoice,
} from '@agentd/contracts';
/** A tool call the model asked for. */
export interface ModelToolCall {
  toolCallId: string;
  toolName: string;
  /** Parsed JSON input. */
  input: unknown;
}

/** An image in a user message (see `TurnImage` of `@agentd/contracts`). */
export type ModelImage = TurnImage;

/** A message sent to a model. Images are sent with the turn that carries them, never stored. */
export type ModelMessage =
  | { role: 'user'; content: string; images?: ModelImage[] }
  | { role: 'assistant'; content: string; toolCalls?: ModelToolCall[] }
  | {
      role: 'tool';
      toolCallId: string;
      toolName: string;
      content: string;
      isError?: boolean;
      /** Images the tool attached (base64), sent to the model as images after the results. */
      images?: ToolImage[];
    };

/** A tool offered to the model. */
export interface ModelToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the input. */
  inputSchema: Record<string, unknown>;
}

/** Which tool the model must call (see `TurnToolChoice` of `@agentd/contracts`). */
export type ModelToolChoice = TurnToolChoice;

/** The shape the answer must take (see `TurnResponseFormat` of `@agentd/contracts`). */
export type ModelResponseFormat = TurnResponseFormat;

/** Sampling and output settings a caller asks for one model call (see `TurnCallOptions`). */
export type ModelCallOptions = TurnCallOptions;

/** What a provider can honour beyond text in, text and tool calls out. */
export interface ProviderCapabilities {
  /** Image parts in user messages. */
  images: boolean;
  /** `responseFormat` JSON held to a schema. */
  json: boolean;
  /** `responseFormat` JSON without a schema (any JSON object). */
  jsonObject: boolean;
  /** `toolChoice` `required` or a named tool. */
  forcedToolChoice: boolean;
}

/** What the call is for; the offline provider answers each honestly. */
export type ModelPurpose = 'chat' | 'compaction' | 'probe';

/** One model request. */
export interface ModelRequest {
  model: string;
  system: string;
  messages: ModelMessage[];
  tools: ModelToolSpec[];
  maxOutputTokens: number;
  signal: AbortSignal;
  purpose: ModelPurpose;
  /** The caller's sampling and format settings, when it gave any. */
  options?: ModelCallOptions | undefined;
}

/** Token usage of one model call. `inputTokens` includes cached input. */
export interface ModelUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

/** Why one model call stopped. */
export type ModelFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'error' | 'other';

/** One event of a model stream. */
export type ModelStreamEvent =
  | { type: 'text-delta'; text: string }
  | ({ type: 'tool-call' } & ModelToolCall)
  | { type: 'finish'; finishReason: ModelFinishReason; usage: ModelUsage };

/** Wire protocol of a provider. */
export type ProviderType = 'offline' | 'openai-compatible' | 'anthropic';

/**
 * A language-model provider. `stream` yields deltas and tool calls and ends with exactly
 * one `finish` event, or throws an `AgentRuntimeError` (`PROVIDER_*`).
 */
export interface ModelProvider {
  readonly id: string;
  readonly type: ProviderType;
  /** True for the offline provider (no network, no key). */
  readonly offline: boolean;
  /** What it honours of {@link ModelCallOptions} and images; absent means everything. */
  readonly capabilities?: ProviderCapabilities;
  stream(request: ModelRequest): AsyncIterable<ModelStreamEvent>;
  /** Checks reachability and the credential (agents.update dryRun); throws `PROVIDER_*` on failure. */
  probe(signal: AbortSignal): Promise<void>;
}

/** A zero usage record. */
export function emptyUsage(): ModelUsage {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
}
