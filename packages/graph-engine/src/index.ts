export { type GraphSection, type GraphSectionInput, graphSectionSchema } from './config.js';
export { GRAPH_TOPIC, type GraphCoordinator, type GraphFencedWrite, type GraphOwnedRows } from './cluster.js';
export type {
  GraphDatabase,
  GraphMigration,
  GraphMigrationSet,
  GraphQueryable,
  GraphSqlValue,
  GraphWriteBatcher,
} from './database.js';
export {
  type CompiledGraph,
  type CompiledNode,
  compileGraph,
  defaultGraphLimits,
  type GraphDefinition,
  graphDefinitionSchema,
  type GraphLimits,
  type GraphNodeDefinition,
  nodeIdPattern,
} from './definition.js';
export { createEchoExecutor, type EchoExecutorOptions } from './echo-executor.js';
export { createRunnerExecutor } from './runner-executor.js';
export {
  GraphError,
  type GraphErrorCode,
  type GraphErrorOptions,
  type GraphIssue,
  isGraphError,
} from './errors.js';
export {
  type CapabilityClass,
  type EventSink,
  type GraphAuthor,
  noopEventSink,
  PIPELINE_AUTHORED,
  type PipelineAuthoredPayload,
} from './events.js';
export {
  type ExecuteGraphOptions,
  type ExecutionListener,
  type ExecutionOutcome,
  executeGraph,
  type GraphExecution,
  type NodeExecutor,
  type NodeRequest,
  type NodeState,
  type NodeStatus,
  type RunStatus,
} from './execute.js';
export { type GraphLogger, noopLogger } from './logger.js';
export { type RawInput, unwrapRawInput, withRawFallback } from './raw-input.js';
export {
  type DefinedGraph,
  entityIdPattern,
  type ExecuteOptions,
  OUTPUT_VALUE_LIMIT,
  type RunDetail,
  type RunDetailNode,
  type RunOutputs,
  type RunStatusNode,
  type RunStatusView,
  type RunSummary,
  type SavedGraph,
  STATUS_OUTPUT_LIMIT,
  savedNamePattern,
} from './graph-types.js';
export { createGraphService, type GraphService, type GraphServiceOptions } from './service.js';
export {
  type AgentToAgentPolicy,
  createGraphTools,
  type GraphAgentTool,
  type GraphToolContext,
  type GraphToolsOptions,
  sameAgentOnly,
} from './tools.js';
export {
  MIGRATION_PACKAGE as GRAPH_MIGRATION_PACKAGE,
  migrationSet as graphEngineMigrationSet,
} from './internal/schema.js';
