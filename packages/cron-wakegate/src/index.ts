export {
  cronSectionSchema,
  type CronSection,
  DEFAULT_HEARTBEAT_PROMPT,
  DEFAULT_RETRY_BACKOFF_MS,
  heartbeatSectionSchema,
  type HeartbeatSection,
  heartbeatUpdateSchema,
  wakeGateDefaultsSchema,
} from './config.js';
export {
  type CronService,
  type CronServiceOptions,
  type CronSettings,
  createCronService,
} from './cron-service.js';
export {
  type AddJobInput,
  agentIdSchema,
  type CronJob,
  type CronRun,
  type FireTrigger,
  type UpdateJobInput,
  WAKE_GATE_SKIP_SUMMARY,
} from './cron-types.js';
/** One field problem, in the shape rpc-core turns into `-32602` `data.issues`. */
export type { FieldIssue } from '@agentd/contracts';
export {
  CronWakegateError,
  type CronWakegateErrorCode,
  type CronWakegateErrorOptions,
  isCronWakegateError,
} from './errors.js';
export { type CronWakeGateBlock, summarizeWakeGateFires, type WakeGateFireCounts } from './evidence.js';
export {
  createHeartbeatService,
  type HeartbeatBeat,
  type HeartbeatService,
  type HeartbeatServiceOptions,
  type HeartbeatStatus,
  type HeartbeatUpdate,
  MAX_WAKE_TEXT,
} from './heartbeat.js';
export { type CronLogger, type ErrorKind, noopLogger, type ProblemFields } from './logger.js';
export {
  cronWakegateMigrationSet,
  cronWakegateMigrations,
  cronWakegatePgMigrations,
  MIGRATION_PACKAGE,
} from './migrations.js';
export {
  hostTimeZone,
  isValidTimeZone,
  MIN_INTERVAL_MS,
  nextFireAfter,
  type ResolvedSchedule,
  type ResolveScheduleOptions,
  resolveSchedule,
  type ScheduleInput,
  scheduleInputSchema,
} from './schedule.js';
export {
  type AgentTurnRequest,
  type AgentTurnResult,
  type AgentTurnRunner,
  type EventSink,
  noopEventSink,
  type TurnOrigin,
  type WakeTarget,
} from './types.js';
export {
  createWakeCoalescer,
  type WakeCoalescer,
  type WakeCoalescerOptions,
  type WakeRequest,
  type WakeRequestReceipt,
} from './wake-coalescer.js';
export {
  MAX_GATE_OUTPUT_BYTES,
  MAX_GATE_TIMEOUT_MS,
  runWakeGate,
  type RunWakeGateOptions,
  type WakeGate,
  type WakeGateFailure,
  type WakeGateResult,
  wakeGateOutputSchema,
  wakeGateSchema,
} from './wake-gate.js';
