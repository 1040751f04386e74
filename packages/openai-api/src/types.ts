import type {
  ClientToolCall,
  ClientToolResult,
  ClientToolSpec,
  TokensUsed,
  TurnCallOptions,
  TurnImage,
} from '@agentd/contracts';

/** An agent offered as a model by `GET /v1/models`. */
export interface OpenAiModel {
  /** The agent id; listed as `agentd/<agentId>`. */
  agentId: string;
  /** Creation time in ms since the epoch, when known. */
  createdMs?: number | undefined;
}

/** Where a completion's conversation lives, as the request named it. */
export interface SessionChoice {
  /** The `x-agentd-session` header: a session key, used as given. */
  header?: string | undefined;
  /** The body's `user` field: the caller's own session of that name. */
  user?: string | undefined;
}

/** What a request asks of its turn besides the agent and session. */
export interface TurnParts {
  /** The last user message's text; empty when images or tool results carry the turn. */
  message: string;
  /** Images of the last user message. */
  images?: TurnImage[] | undefined;
  /** The client's tools, offered beside the agent's. */
  tools?: ClientToolSpec[] | undefined;
  /** Results of the client tool calls the session's last answer ended with. */
  toolResults?: ClientToolResult[] | undefined;
  /** Sampling and format settings; `maxOutputTokens` caps the answer. */
  options?: (TurnCallOptions & { maxOutputTokens?: number }) | undefined;
}

/** One agent turn a chat completion or response asks for. */
export interface ChatTurn extends TurnParts {
  agentId: string;
  /** The session key {@link OpenAiBackend.session} chose. */
  sessionKey: string;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
  /** Receives the reply text as it is produced (streamed requests only). */
  onDelta?: ((text: string) => void) | undefined;
}

/** What the turn produced. */
export interface ChatTurnResult {
  response: string;
  tokensUsed: TokensUsed;
  /** The agent's finish reason (`stop`, `length`, `tool_calls`, `content_filter`, `timeout`, `cancelled`, `error`). */
  finishReason: string;
  sessionKey: string;
  /** The client tool calls the turn ended on (`finishReason: 'tool_calls'`). */
  toolCalls?: ClientToolCall[] | undefined;
  /** Extra fields echoed under `agentd` in the answer (end reason, trace id). */
  details?: Record<string, unknown> | undefined;
}

/** Vectors of an embeddings request. */
export interface EmbedResult {
  /** The embedder's model name, answered as `model`. */
  model: string;
  vectors: ArrayLike<number>[];
}

/**
 * What the API runs on, for one authenticated caller `C`. Each method may throw an
 * {@link OpenAiApiError} to choose the answer; other errors become 500.
 */
export interface OpenAiBackend<C> {
  /** The agents the caller may talk to. */
  listModels(caller: C): Promise<OpenAiModel[]> | OpenAiModel[];
  /** The session key a completion uses: the header's, the `user`'s, else a fresh one. */
  session(caller: C, choice: SessionChoice): Promise<string> | string;
  /** Runs one agent turn. */
  chat(caller: C, turn: ChatTurn): Promise<ChatTurnResult>;
  /**
   * Embeds texts with the memory embedder; `dimensions`, when asked, is the vector length the
   * answer must have (throw a 400 naming `dimensions` when the embedder cannot make it).
   */
  embed(
    caller: C,
    input: string[],
    signal: AbortSignal,
    options: { dimensions?: number },
  ): Promise<EmbedResult>;
}

/** A request counter of one caller: true while it is under its rate. */
export interface RateLimiter {
  tryAcquire(): boolean;
}
