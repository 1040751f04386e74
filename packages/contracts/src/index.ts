export type {
  AgentTool,
  AgentTurnRequest,
  CallerChannel,
  AgentTurnResult,
  AgentTurnRunner,
  DefineTool,
  FinishedSpan,
  ObservedTurn,
  SpanSink,
  TokensUsed,
  ToolContext,
  ToolImage,
  TurnOrigin,
  WakeTarget,
} from './agent.js';
export type {
  ClientToolCall,
  ClientToolResult,
  ClientToolSpec,
  TurnCallOptions,
  TurnImage,
  TurnResponseFormat,
  TurnToolChoice,
} from './client-turn.js';
export type { AutonomyBlock, AutonomyRunSummary, ToolServerStatus } from './autonomy.js';
export type { ClusterInstance, ClusterStatus, InstanceAffinityData } from './cluster.js';
export type { AgentdErrorOptions } from './errors.js';
export type { EventSink } from './events.js';
export type { Injected } from './injected.js';
export type { FieldIssue, FieldIssuesData, ValidationIssue } from './issues.js';
export type { ErrorKind, Logger, ProblemFields } from './logger.js';
export type { EmbeddingCacheStats, MemoryStats } from './memory.js';
export type { CronWakeGateBlock, WakeGateFireCounts } from './wake-gate.js';
