// The audit room of the evidence package: the security-audit producer (`logs/audit.jsonl`)
// and the config audit (`logs/config-audit.jsonl`), imported as `@agentd/evidence/audit`.
// They are the daemon's record of who did what, apart from the per-turn evidence files.
export {
  CONFIG_AUDIT_FILE,
  CONFIG_AUDIT_MAX_BYTES,
  type ConfigAudit,
  type ConfigAuditEntry,
  type ConfigAuditOptions,
  type ConfigCommit,
  type ConfigFailureReason,
  configFailureReason,
  createConfigAudit,
  SENSITIVE_SECTIONS,
} from './config-audit.js';
export {
  type AuditActor,
  type AuditClassification,
  type AuditEvent,
  type AuditEventSink,
  type AuditKind,
  type AuditOutcome,
  type AuditSeverity,
  createSecurityAudit,
  currentActor,
  noopSecurityAudit,
  runAsActor,
  type ScopeToken,
  scopeTokens,
  type SecurityAudit,
  tokenSeverity,
  type WebhookAuditInput,
  webhookAuditEvent,
} from './security-audit.js';
