export {
  type AutonomyService,
  type AutonomyServiceOptions,
  createAutonomyService,
  type IntrospectCaller,
  type IntrospectResult,
  type IntrospectRun,
  type IntrospectToolServer,
  type Notifier,
  type RecoveryResult,
  type RunProcess,
  type SpawnRequest,
  type SpawnResult,
  type SubagentTurnRunner,
} from './autonomy-service.js';
export {
  type AutonomySection,
  autonomySectionSchema,
  type SecuritySection,
  securitySectionSchema,
} from './config.js';
export {
  AutonomyError,
  type AutonomyErrorCode,
  type AutonomyErrorOptions,
  type FieldIssue,
  isAutonomyError,
} from './errors.js';
export {
  hashLeaseSecret,
  type LeaseRefusal,
  LeaseStore,
  type LeaseView,
  type MintLease,
} from './lease-store.js';
export { type AutonomyLogger, noopLogger } from './logger.js';
export {
  autonomyMigrationSet,
  autonomyMigrations,
  autonomyPgMigrations,
  MIGRATION_PACKAGE,
} from './migrations.js';
export { ENDED_STATUSES, type RunBudget, type RunRecord, type RunStatus, RunStore } from './run-store.js';
export { type RunView, runView } from './run-view.js';
export { summarizeAutonomy } from './summary.js';
export type { AutonomyGate, GateCall, GateResult, GateVerdict, SubagentTurnRequest } from './gate-types.js';
export { createAutonomyTools } from './tools.js';
export { intersectToolSets, matchesAny, resolveToolSet } from './tool-set.js';
