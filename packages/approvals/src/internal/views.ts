import type { ApprovalResolution, PendingApproval } from '../types.js';
import type { RequestRow } from './store.js';

/** A pending request as listed and announced, `ageMs` as of `now`. */
export function pendingView(row: RequestRow, waiting: number, now: number): PendingApproval {
  return {
    id: row.id,
    sessionKey: row.sessionKey,
    agentId: row.agentId,
    toolName: row.toolName,
    argsDigest: row.argsDigest,
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
    ageMs: Math.max(0, now - row.createdAt),
    waiting,
  };
}

/** A decided request as confirmed and announced. */
export function resolutionOf(row: RequestRow, now: number): ApprovalResolution {
  return {
    id: row.id,
    sessionKey: row.sessionKey,
    agentId: row.agentId,
    toolName: row.toolName,
    approved: row.status === 'approved',
    status: row.status === 'approved' ? 'approved' : 'denied',
    ...(row.reason !== undefined ? { reason: row.reason } : {}),
    resolvedBy: row.resolvedBy ?? 'system',
    resolvedAt: row.resolvedAt ?? now,
  };
}

/** The audit fields of a decided request: `reasonKind` is a closed token, never the operator's text. */
export function decisionAudit(row: RequestRow, reasonKind: string, caller?: string) {
  const approved = row.status === 'approved';
  return {
    classification: approved ? ('allowed' as const) : ('denied' as const),
    outcome: approved ? ('success' as const) : ('failure' as const),
    severity: approved ? ('medium' as const) : ('low' as const),
    agentId: row.agentId,
    sessionKey: row.sessionKey,
    action: 'resolve',
    requestId: row.id,
    toolName: row.toolName,
    reason: reasonKind,
    resolvedBy: row.resolvedBy,
    ...(caller !== undefined ? { caller } : {}),
  };
}
