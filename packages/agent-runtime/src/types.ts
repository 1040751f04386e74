import type { EventSink, TokensUsed, TurnOrigin } from '@agentd/contracts';

export type {
  AgentTool,
  AgentTurnRunner,
  EventSink,
  TokensUsed,
  ToolContext,
  TurnOrigin,
} from '@agentd/contracts';

/**
 * Why a turn ended, for observability (`outcome.endReason`): `completed`,
 * `completed_with_tool_errors`, `context_exhausted` (the pre-flight guard refused),
 * `output_starved` (cut at max output tokens), `timeout` (stall or makespan),
 * `max_steps` (still calling tools at the step limit), `cancelled`, `error`.
 */
export type EndReason =
  | 'completed'
  | 'completed_with_tool_errors'
  | 'context_exhausted'
  | 'output_starved'
  | 'timeout'
  | 'max_steps'
  | 'cancelled'
  | 'error';

/** The contract's `finishReason` values (decisions.md). */
export type FinishReason =
  | 'stop'
  | 'length'
  | 'tool_calls'
  | 'content_filter'
  | 'timeout'
  | 'cancelled'
  | 'error';

/** A streaming event of a running turn (SSE deltas, tool progress). */
export type TurnStreamEvent =
  | { type: 'delta'; text: string; step: number }
  | { type: 'tool-call'; toolName: string; toolCallId: string; step: number }
  | {
      type: 'tool-result';
      toolName: string;
      toolCallId: string;
      ok: boolean;
      durationMs: number;
      step: number;
    };

/** One turn request, as the {@link AgentTurnRunner} interface defines it, plus streaming hooks. */
export interface TurnRequest {
  /** Agent to run; the session's agent, else `default`. */
  agentId?: string;
  /** The user message. */
  message: string;
  /** Session key, string form; a fresh key creates the session. @default 'default:rpc:anonymous' */
  sessionKey?: string;
  /** Model override, `model` of the agent's provider or `<providerId>/<model>`. */
  model?: string;
  /** Makespan ceiling of this turn; overrides the agent's `timeouts.turnMs`. */
  timeoutMs?: number;
  /** Cancels the turn (finishReason `cancelled`). */
  signal?: AbortSignal;
  /** Who started the turn. @default 'rpc' */
  origin?: TurnOrigin;
  /** Channel type recorded on a new session. @default derived from `origin` */
  channelType?: string;
  /** Trace id to record; generated when absent. */
  traceId?: string;
  /** Marks evidence rows as synthetic (test harness traffic). @default false */
  synthetic?: boolean;
  /** Narrows the agent's tools for this turn to names or `prefix*` patterns (`[]` means no tools). */
  allowedTools?: string[];
  /** Receives token deltas and tool progress while the turn runs. */
  onEvent?: (event: TurnStreamEvent) => void;
}

/** What a turn returns: the contract's agent turn result plus the session key and end reason. */
export interface TurnResult {
  response: string;
  tokensUsed: TokensUsed;
  finishReason: FinishReason;
  sessionKey: string;
  /** Why the turn ended (see {@link EndReason}). */
  endReason: EndReason;
  /** Model steps taken (one per model call). */
  steps: number;
  /** Trace id the evidence records carry. */
  traceId: string;
}

/** An event sink that drops everything; the default. */
export const noopEventSink: EventSink = { emit: () => {} };
