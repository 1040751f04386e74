/** Where a turn came from; the agent runtime uses it for session kinds and reports. */
export type TurnOrigin = 'rpc' | 'hook' | 'cron' | 'graph' | 'heartbeat' | 'subagent';

/** One agent turn to run (the shape agreed with @agentd/agent-runtime). */
export interface AgentTurnRequest {
  agentId?: string;
  message: string;
  sessionKey?: string;
  model?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
  origin?: TurnOrigin;
}

/** What one agent turn produced. */
export interface AgentTurnResult {
  response: string;
  tokensUsed: { input: number; output: number; total: number };
  finishReason: string;
  sessionKey: string;
}

/**
 * Runs agent turns. Declared here (structurally) so this package does not depend on the
 * agent runtime; the daemon passes the runtime's runner.
 */
export interface AgentTurnRunner {
  runTurn(request: AgentTurnRequest): Promise<AgentTurnResult>;
}

/** Receives internal events; payloads are counts, ids and closed enums, never message bodies. */
export interface EventSink {
  emit(event: string, payload: Record<string, unknown>): void;
}

/** An event sink that drops everything; the default. */
export const noopEventSink: EventSink = { emit: () => {} };

/**
 * What webhook `wake` actions call: `wakeNow` runs a heartbeat at once (coalesced with
 * other wakes), `queueForNextBeat` hands text to the next scheduled heartbeat.
 */
export interface WakeTarget {
  /** Runs a heartbeat now; `text`, when given, is included in that beat's message. */
  wakeNow(text?: string): void;
  /** Queues `text` for the next heartbeat, whenever it runs. */
  queueForNextBeat(text: string): void;
}
