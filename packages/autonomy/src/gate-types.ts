import type { AgentTurnRequest } from '@agentd/contracts';

/**
 * What the autonomy gate reads of a tool call: the agent runtime's `ToolGateCall` has these
 * fields (and more), so the gate drops into its gate chain without this package depending on
 * the runtime.
 */
export interface GateCall {
  readonly toolName: string;
  readonly sessionKey: string;
}

/** What the gate reads of a call's result (the runtime's `ToolGateResult`). */
export interface GateResult {
  readonly ran: boolean;
  errorKind?: string | undefined;
}

/** A before-decision, shaped as the runtime's `ToolGateVerdict`. */
export type GateVerdict = { allow: true } | { allow: false; errorKind: string; message: string };

/** A tool-runner gate, structurally the runtime's `ToolGate`. */
export interface AutonomyGate {
  readonly name: string;
  before(call: GateCall): Promise<GateVerdict>;
  after<R extends GateResult>(call: GateCall, result: R): Promise<R>;
}

/** A turn of a run: the shared request plus the runtime's narrowing of the agent's tools. */
export interface SubagentTurnRequest extends AgentTurnRequest {
  /** The run's capability set: the only tools the turn offers and runs. */
  allowedTools?: string[];
  /** The runtime's step-boundary hook: messages taken into the running turn before each model call. */
  injections?: () => readonly string[];
}
