import type { AgentTurnRequest, AgentTurnResult, ClientToolResult, EventSink } from '@agentd/contracts';
import type { ModelCallOptions, ModelImage, ModelToolCall, ModelToolSpec } from './provider.js';

export type {
  AgentTool,
  ClientToolResult,
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

/**
 * One turn request: the shared `AgentTurnRequest` plus what only the runtime takes. Here
 * `agentId` defaults to the session's agent, else `default`; `sessionKey` to
 * `default:rpc:anonymous` (a fresh key creates the session); `model` is a model of the
 * agent's provider or `<providerId>/<model>`; `timeoutMs` overrides the agent's
 * `timeouts.turnMs`; an aborted `signal` ends the turn with finishReason `cancelled`.
 */
export interface TurnRequest extends AgentTurnRequest {
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
  /**
   * The step-boundary hook: called before each model call of the turn (so between steps, after
   * the previous step's tool results); each string it answers joins the running turn as a user
   * message, stored with the turn and seen by the model from that call on. It hands over what it
   * answers (a queue drains itself); what arrives after the last model call is not taken.
   */
  injections?: () => readonly string[];
  /**
   * Tools the caller runs itself (an OpenAI client's `tools`), offered beside the agent's own.
   * When the model calls one, the turn ends with `finishReason: 'tool_calls'` and the calls in
   * `clientToolCalls`; the caller's next turn on the session brings their `toolResults`.
   */
  clientTools?: ModelToolSpec[];
  /** Results of the client tool calls the session's last turn ended with; `message` may then be empty. */
  toolResults?: ClientToolResult[];
  /** Images sent with the message (to a provider that takes images); `message` may then be empty. */
  images?: ModelImage[];
  /**
   * The caller's sampling and format settings for every model call of the turn (`toolChoice`
   * binds the first call; `none` binds all). `maxOutputTokens` caps the agent's own limit.
   */
  callOptions?: ModelCallOptions & { maxOutputTokens?: number };
}

/** What a turn returns: the shared `AgentTurnResult` with a typed finish reason, plus the end reason. */
export interface TurnResult extends AgentTurnResult {
  finishReason: FinishReason;
  /** Why the turn ended (see {@link EndReason}). */
  endReason: EndReason;
  /** Model steps taken (one per model call). */
  steps: number;
  /** Trace id the evidence records carry. */
  traceId: string;
  /** The client tool calls the turn ended on (`finishReason: 'tool_calls'`), for the caller to run. */
  clientToolCalls?: ModelToolCall[];
}

/** An event sink that drops everything; the default. */
export const noopEventSink: EventSink = { emit: () => {} };
