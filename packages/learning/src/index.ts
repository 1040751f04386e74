export { type LearningSection, learningSectionSchema } from './config.js';
export {
  isLearningError,
  LearningError,
  type LearningErrorCode,
  type LearningErrorOptions,
} from './errors.js';
export type { OutcomeRow, Procedure, ProcedureState } from './internal/store.js';
export {
  type ChannelMessageRef,
  createLearningService,
  type LearnedSkill,
  type LearningReaction,
  type LearningService,
  type LearningServiceOptions,
  type LearningStatus,
  type LearningTurn,
} from './learning-service.js';
export { JUDGE_SESSION_PREFIX, judgePrompt, judgeTurn, parseVerdict } from './judge.js';
export {
  learningMigrationSet,
  learningMigrations,
  learningPgMigrations,
  MIGRATION_PACKAGE,
} from './migrations.js';
export {
  followUpSignal,
  type OutcomeEvidence,
  type OutcomeSource,
  procedureSignature,
  reactionSignal,
  resolveOutcome,
  type TurnOutcome,
} from './outcome.js';
export {
  type AdmissionOutcome,
  type Cluster,
  clusterSuccesses,
  type FunnelCounts,
  reflectionPrompt,
  type Verdict,
  validateReflection,
} from './reflection.js';
export { type AgentSweep, REFLECTION_SESSION_PREFIX, type SweepDeps, sweepAgent } from './sweep.js';
export {
  dropLifecycleJob,
  ensureLifecycleJob,
  LIFECYCLE_JOB_NAME,
  type LifecycleCron,
  lifecycleRunner,
} from './lifecycle-job.js';
