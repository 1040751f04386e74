export type {
  AgentTool,
  AgentTurnRequest,
  AgentTurnResult,
  AgentTurnRunner,
  DefineTool,
  ObservedTurn,
  TokensUsed,
  ToolContext,
  TurnOrigin,
  WakeTarget,
} from './agent.js';
export type { AutonomyBlock, AutonomyRunSummary } from './autonomy.js';
export type { AgentdErrorOptions } from './errors.js';
export type { EventSink } from './events.js';
export type { FieldIssue, ValidationIssue } from './issues.js';
export type { ErrorKind, Logger, ProblemFields } from './logger.js';
export type { EmbeddingCacheStats, MemoryStats } from './memory.js';
export type { CronWakeGateBlock, WakeGateFireCounts } from './wake-gate.js';
