export { isObsReportsError, ObsReportsError, type ObsReportsErrorCode, type FieldIssue } from './errors.js';
export {
  AUDIT_EVENTS,
  type AuditQuery,
  type AuditRow,
  auditQuerySchema,
  type ChannelActivity,
  createObsEvidence,
  type DeliveryTrace,
  type DiagnosticEvent,
  type DiagnosticsQuery,
  diagnosticsQuerySchema,
  type EventSink,
  OBS_RESET_TABLES,
  type ObsEvidence,
  type ObsEvidenceOptions,
  type ObsResetTable,
} from './evidence-store.js';
export {
  buildFleetHealthReport,
  FLEET_CATEGORIES,
  FLEET_THRESHOLDS,
  type FilesCoverage,
  type FleetCronWakeGate,
  type FleetEvidence,
  type FleetHealthReport,
  type Finding,
} from './fleet-report.js';
export {
  buildIncidentReport,
  buildSessionNotFoundReport,
  type CronWakeRow,
  type IncidentReport,
  type IncidentReportOptions,
  REPORT_SCHEMA_VERSION,
  type ReportReference,
  type RootCause,
  SESSION_CATEGORIES,
  type SessionEvidence,
  SUMMARY_REPORT_BYTES,
  type Truncation,
} from './incident-report.js';
export { type ErrorKind, noopLogger, type ObsLogger, type ProblemFields } from './logger.js';
export {
  MIGRATION_PACKAGE,
  obsReportsMigrationSet,
  obsReportsMigrations,
  obsReportsPgMigrations,
} from './migrations.js';
export {
  createObsService,
  type ExplainParams,
  explainParamsSchema,
  fleetHealthParamsSchema,
  ROOT_SESSION_PREFIX,
  type ObsService,
  type ObsServiceOptions,
  type TraceSearchParams,
  traceSearchParamsSchema,
} from './obs-service.js';
