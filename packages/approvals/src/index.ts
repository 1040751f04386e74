export {
  type ApprovalService,
  type ApprovalServiceOptions,
  type ApprovalTimers,
  createApprovalService,
  type ResolveOptions,
} from './approval-service.js';
export {
  APPROVAL_MODES,
  type ApprovalMode,
  type ApprovalRule,
  approvalRuleSchema,
  type ApprovalsConfig,
  type ApprovalsConfigInput,
  approvalsSectionSchema,
  type CompiledRules,
  compileRules,
} from './config.js';
export {
  type ArgsDigest,
  argsFingerprint,
  canonicalJson,
  digestArgs,
  PREVIEW_CHARS,
  scrubArgs,
  scrubText,
} from './digest.js';
export {
  ApprovalsError,
  type ApprovalsErrorCode,
  type ApprovalsErrorOptions,
  isApprovalsError,
} from './errors.js';
export {
  type ApprovalGate,
  type ApprovalGateCall,
  type ApprovalGateVerdict,
  createApprovalGate,
} from './gate.js';
export {
  approvalsMigrationSet,
  approvalsMigrations,
  approvalsPgMigrations,
  MIGRATION_PACKAGE,
} from './migrations.js';
export type {
  ApprovalAuditEvent,
  ApprovalAuditSink,
  ApprovalCheck,
  ApprovalEvent,
  ApprovalResolution,
  ApprovalStatus,
  ApprovalVerdict,
  PendingApproval,
  SystemDenialReason,
} from './types.js';
