export { AgentdMcpError, type AgentdMcpErrorCode, isAgentdMcpError } from './errors.js';
export { callErrorText, type GatewayCall } from './gateway-call.js';
export { createMcpHttpHandler, type McpHttpHandler, type McpHttpHandlerOptions } from './http-handler.js';
export { type AgentdMcpServerOptions, createAgentdMcpServer } from './server.js';
export { bridgeMcpStdio, type McpStdioBridgeOptions } from './stdio.js';
export {
  type McpSection,
  type McpServerEntry,
  mcpHttpServerSchema,
  mcpSectionSchema,
  mcpServerEntrySchema,
  mcpServerIdSchema,
  mcpStdioServerSchema,
} from './config.js';
export {
  createMcpToolHost,
  type McpServerStatus,
  type McpToolHost,
  type McpToolHostOptions,
  type McpToolRegistry,
} from './tool-host.js';
export type { Backoff, McpServerState } from './internal/server-connection.js';
export type {
  McpApprovalVerdict,
  McpClientHooks,
  McpCompletion,
  McpCompletionRequest,
} from './internal/client-requests.js';
