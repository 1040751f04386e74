import type { TokensUsed } from '@agentd/contracts';

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

/** One agent turn a chat completion asks for. */
export interface ChatTurn {
  agentId: string;
  /** The last user message of the request. */
  message: string;
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
  /** Embeds texts with the memory embedder. */
  embed(caller: C, input: string[], signal: AbortSignal): Promise<EmbedResult>;
}

/** A request counter of one caller: true while it is under its rate. */
export interface RateLimiter {
  tryAcquire(): boolean;
}
