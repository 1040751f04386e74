export {
  type CallTally,
  type CapabilitySocket,
  type CapabilitySocketOptions,
  matchesPattern,
  openCapabilitySocket,
  type RoutedCall,
  type RoutedResult,
  SOCKET_ERRORS,
  type SocketLease,
} from './capability-socket.js';
export {
  DEFAULT_TOOL_DENYLIST,
  type OrchestrateSection,
  orchestrateSectionSchema,
  type WebSearchSettings,
  webSearchSchema,
} from './config.js';
export {
  type FieldIssue,
  isOrchestrateError,
  OrchestrateError,
  type OrchestrateErrorCode,
  type OrchestrateErrorOptions,
} from './errors.js';
export { BUILTIN_NAMES } from './internal/builtins.js';
export { JAIL_PATHS, LEASE_ENV, LEASE_ID_ENV, SOCKET_ENV } from './internal/jail.js';
export {
  createOrchestrateService,
  type FailureClass,
  type OrchestrateAutonomy,
  type OrchestrateService,
  type OrchestrateServiceOptions,
  type ScriptRequest,
  type ScriptResult,
} from './orchestrate-service.js';
