import type { ApprovalService } from './approval-service.js';

/**
 * The part of a tool call the approval gate reads. The agent runtime's `ToolGateCall` has
 * these fields, so the gate joins its chain without this package depending on the runtime.
 */
export interface ApprovalGateCall {
  readonly toolName: string;
  /** The model's raw arguments (hashed and digested, never stored as they are). */
  readonly input: unknown;
  readonly agentId: string;
  readonly sessionKey: string;
  /** Aborted when the turn ends; the wait ends with it. */
  readonly signal: AbortSignal;
}

/** A before-gate's verdict, in the agent runtime's `ToolGateVerdict` shape. */
export type ApprovalGateVerdict = { allow: true } | { allow: false; errorKind: string; message: string };

/** A tool gate (the agent runtime's `ToolGate` shape) that asks the approval service. */
export interface ApprovalGate {
  readonly name: 'approval';
  before(call: ApprovalGateCall): Promise<ApprovalGateVerdict>;
}

const ALLOW: ApprovalGateVerdict = { allow: true };

/**
 * The approval gate of the tool runner's chain: a call that needs approval waits here (the
 * turn pauses) until it is approved, denied, timed out or the turn ends. A denied call never
 * reaches its handler; the model is told why, with the trajectory's `errorKind` `denied`.
 */
export function createApprovalGate(service: ApprovalService): ApprovalGate {
  return {
    name: 'approval',
    async before(call) {
      const verdict = await service.check({
        sessionKey: call.sessionKey,
        agentId: call.agentId,
        toolName: call.toolName,
        input: call.input,
        signal: call.signal,
      });
      if (verdict.allow) return ALLOW;
      const why =
        verdict.via === 'rule'
          ? 'the approval rules deny it'
          : verdict.via === 'denial_cache'
            ? `it was denied moments ago (${verdict.reason})`
            : `the approval request was denied (${verdict.reason})`;
      return { allow: false, errorKind: 'denied', message: `Tool ${call.toolName} was not approved: ${why}` };
    },
  };
}
