export {
  createAnthropicProvider,
  createOpenAiCompatibleProvider,
  type HttpProviderOptions,
} from './ai-sdk-provider.js';
export {
  type AgentDefinition,
  type AgentDefinitionInput,
  type AgentsSection,
  agentDefinitionSchema,
  agentMemorySchema,
  agentsSectionSchema,
  type CapabilityClass,
  capabilityClassSchema,
  type ModelCapabilities,
  modelCapabilitiesSchema,
  type ContextEngineSection,
  contextEngineSectionSchema,
  DEFAULT_AGENT_ID,
  entityIdSchema,
  OFFLINE_PROVIDER_ID,
  type Prices,
  type ProviderEntry,
  type ProvidersSection,
  providerEntrySchema,
  providersSectionSchema,
  type ToolBreakerSettings,
  toolBreakerSchema,
} from './config.js';
export {
  type BudgetPlan,
  type ContextWindow,
  planBudget,
  resolveContextWindow,
  selectHistory,
} from './context.js';
export {
  AgentRuntimeError,
  type AgentRuntimeErrorCode,
  type AgentRuntimeErrorOptions,
  isAgentRuntimeError,
} from './errors.js';
export { type AgentRuntimeLogger, noopLogger } from './logger.js';
export {
  agentRuntimeMigrationSet,
  agentRuntimeMigrations,
  agentRuntimePgMigrations,
  MIGRATION_PACKAGE,
} from './migrations.js';
export {
  createOfflineProvider,
  type OfflineProviderOptions,
  type OfflineReply,
  type OfflineScript,
} from './offline-provider.js';
export { createOffloadReadTool, OFFLOAD_READ_MAX_CHARS, OFFLOAD_READ_TOOL } from './offload.js';
export type {
  ModelCallOptions,
  ModelFinishReason,
  ModelImage,
  ModelMessage,
  ModelResponseFormat,
  ModelToolChoice,
  ProviderCapabilities,
  ModelProvider,
  ModelPurpose,
  ModelRequest,
  ModelStreamEvent,
  ModelToolCall,
  ModelToolSpec,
  ModelUsage,
  ProviderType,
} from './provider.js';
export type {
  AgentsApi,
  AgentUpdateResult,
  AgentView,
  OperationModels,
} from './agent-registry.js';
export type { BillingApi } from './billing-service.js';
export type { ModelView, ProviderView } from './model-resolver.js';
export {
  type AgentRuntime,
  createAgentRuntime,
  type ToolInvocation,
  type ToolInvocationResult,
} from './runtime.js';
export type {
  AgentRuntimeOptions,
  ApprovalCache,
  ProviderFactory,
  SessionMemory,
  TurnRecall,
  TurnSkills,
  ObservedTurn,
  TurnObserver,
  TurnPlacement,
  TurnRecallRequest,
  TurnRecallResult,
} from './runtime-options.js';
export type { CompactResult } from './session-compaction.js';
export {
  type ContextDagApi,
  type ContextTree,
  type ContextTreeNode,
  MAX_TREE_MESSAGES,
  NODE_PREVIEW_CHARS,
} from './context-dag.js';
export type { ContextNode, ConversationSummary } from './context-dag-store.js';
export type {
  ResetConversationResult,
  SessionExport,
  SessionsApi,
} from './session-service.js';
export {
  MAX_TOOL_RESULT_CHARS,
  type ToolGate,
  type ToolGateCall,
  type ToolGateResult,
  type ToolGateVerdict,
} from './tool-gates.js';
export { TENANT_GATE, tenantGate } from './tenant-gate.js';
export { DEFAULT_SESSION_KEY } from './turn-loop.js';
export { agentCapabilityClass, type CapabilityClassSource } from './capability-class.js';
export { type AgentContextDag, contextDagByAgent } from './session-stats.js';
export {
  createServedWindowMonitor,
  type ServedWindowMonitor,
  type ServedWindowMonitorOptions,
} from './served-context.js';
export {
  checkServedWindows,
  isLocalEndpoint,
  probeServedWindows,
  type ServedWindowPosture,
  type ServedWindowProbeOptions,
} from './served-window.js';
export {
  formatSessionKey,
  parseSessionKey,
  type SessionKeyObject,
  sessionKeyObjectSchema,
  sessionKeySchema,
} from './session-key.js';
export type {
  BillingAggregate,
  SessionKind,
  SessionMessage,
  SessionRecord,
  SessionSearchHit,
} from './session-store.js';
export { estimateMessageTokens, estimateTokens, estimateToolTokens } from './tokens.js';
export {
  estimatingCounter,
  openAiEncodingOf,
  type TokenCounter,
  type TokenCounting,
  tokenCounterFor,
} from './token-counter.js';
export {
  type BreakerAdmission,
  type BreakerTransition,
  TOOL_BREAKER_MAX_SESSIONS,
  ToolBreakers,
  type ToolBreakerEvent,
  UNHEALTHY_TOOL_ERROR_KINDS,
} from './tool-breaker.js';
export {
  type AgentTool,
  type AgentTurnRunner,
  type ClientToolResult,
  type EndReason,
  type EventSink,
  type FinishReason,
  noopEventSink,
  type TokensUsed,
  type ToolContext,
  type TurnOrigin,
  type TurnRequest,
  type TurnResult,
  type TurnStreamEvent,
} from './types.js';
export type { CompletionRequest, CompletionResult } from './model-complete.js';
