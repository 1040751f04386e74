import type { ArgsDigest } from './digest.js';

/** Where a request is: waiting for a human, or decided. */
export type ApprovalStatus = 'pending' | 'approved' | 'denied';

/**
 * Why a call was denied without a human saying so, or why a request was decided by the
 * service itself. An operator's denial carries the operator's own reason text instead.
 *
 * - `rule`: a rule (or the default mode) says `deny`.
 * - `denial_cache`: the same session and tool were denied moments ago.
 * - `timeout`: nobody resolved the request within `timeoutMs`.
 * - `restart`: the daemon restarted while the request was pending; the turn that waited is gone.
 * - `cancelled`: the turn that waited ended (cancelled, timed out) before a decision; the
 *   request itself stays pending (a retry of the same call joins it).
 * - `shutdown`: the daemon is stopping; the request stays pending and is denied with
 *   `restart` at the next start.
 * - `unavailable`: the request could not be recorded, so it was refused (fail closed).
 */
export type SystemDenialReason =
  | 'rule'
  | 'denial_cache'
  | 'timeout'
  | 'restart'
  | 'cancelled'
  | 'shutdown'
  | 'unavailable';

/** A pending request as `admin.approval.pending` lists it and `approval.requested` announces it. */
export interface PendingApproval {
  id: string;
  sessionKey: string;
  agentId: string;
  toolName: string;
  /** Hash, size and scrubbed preview of the arguments; never the raw arguments. */
  argsDigest: ArgsDigest;
  /** Epoch ms the request was made. */
  createdAt: number;
  /** Epoch ms it is denied with reason `timeout` unless resolved before. */
  expiresAt: number;
  /** How long it has waited, in ms, when listed. */
  ageMs: number;
  /** Tool calls waiting on it (identical calls join one request). */
  waiting: number;
}

/** A decided request, as `admin.approval.resolve` confirms it and `approval.resolved` announces it. */
export interface ApprovalResolution {
  id: string;
  sessionKey: string;
  agentId: string;
  toolName: string;
  approved: boolean;
  status: 'approved' | 'denied';
  /** The operator's reason, or a {@link SystemDenialReason}. */
  reason?: string | undefined;
  /** Who decided: the operator name or token client, or `system`. */
  resolvedBy: string;
  resolvedAt: number;
  /** Set when the request had already been decided before this call (nothing changed). */
  alreadyResolved?: true;
}

/** One tool call the gate asks about. */
export interface ApprovalCheck {
  sessionKey: string;
  agentId: string;
  toolName: string;
  /** The model's arguments: hashed to join identical requests and digested for the operator. */
  input: unknown;
  /** Ends the wait (the turn was cancelled or timed out). */
  signal?: AbortSignal | undefined;
}

/** The gate's answer for one call. */
export type ApprovalVerdict =
  | {
      allow: true;
      /** `off` (approvals disabled), `auto`, `approval_cache`, `approved`. */
      via: 'off' | 'auto' | 'approval_cache' | 'approved';
      requestId?: string;
    }
  | {
      allow: false;
      /** `rule`, `denial_cache` or `denied` (a request was denied). */
      via: 'rule' | 'denial_cache' | 'denied';
      /** The operator's reason or a {@link SystemDenialReason}. */
      reason: string;
      requestId?: string;
    };

/** What the service announces (the daemon turns them into admin WebSocket notifications). */
export type ApprovalEvent =
  | { type: 'requested'; request: PendingApproval }
  | { type: 'resolved'; resolution: ApprovalResolution };

/**
 * An `audit:event` as this package emits it (kind `approval`); structurally the evidence
 * package's `AuditEvent`, so the daemon's security audit can be passed as the sink.
 */
export interface ApprovalAuditEvent {
  kind: 'approval';
  classification: 'allowed' | 'denied' | 'escalated';
  outcome: 'success' | 'failure';
  severity: 'info' | 'low' | 'medium' | 'high' | 'critical';
  agentId?: string;
  sessionKey?: string;
  [ref: string]: unknown;
}

/** Receives the service's audit events (the daemon's `SecurityAudit`). */
export interface ApprovalAuditSink {
  emit(event: ApprovalAuditEvent): void;
}
