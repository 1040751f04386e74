/** One audit event (structurally `@agentd/evidence`'s `AuditEvent`: closed enums plus counts, ids and tokens). */
export interface SkillsAuditEvent {
  kind: 'config';
  classification: 'allowed' | 'denied';
  outcome: 'success' | 'failure';
  severity: 'info' | 'low' | 'medium' | 'high';
  [ref: string]: unknown;
}

/** Where import, refusal and removal decisions go (the daemon's `audit:event` producer). */
export interface SkillsAudit {
  emit(event: SkillsAuditEvent): void;
}

/** An accepted import. */
export function auditImport(audit: SkillsAudit, refs: Record<string, unknown>): void {
  audit.emit({
    kind: 'config',
    classification: 'allowed',
    outcome: 'success',
    severity: 'low',
    action: 'skill_import',
    ...refs,
  });
}

/**
 * A refused import. A scan refusal is `high` (the registry served something dangerous); the
 * rule names (closed tokens) and counts travel, never the matched text.
 */
export function auditRefusal(
  audit: SkillsAudit,
  refs: Record<string, unknown>,
  reason: string,
  findings: { rule?: unknown }[] = [],
): void {
  const rules = [...new Set(findings.map((finding) => String(finding.rule)))].sort();
  audit.emit({
    kind: 'config',
    classification: 'denied',
    outcome: 'failure',
    severity: findings.length > 0 ? 'high' : 'medium',
    action: 'skill_import',
    reason,
    ...(findings.length > 0 ? { findings: findings.length, rules } : {}),
    ...refs,
  });
}

/** A removed imported skill. */
export function auditRemoval(audit: SkillsAudit, refs: Record<string, unknown>): void {
  audit.emit({
    kind: 'config',
    classification: 'allowed',
    outcome: 'success',
    severity: 'low',
    action: 'skill_remove',
    ...refs,
  });
}
