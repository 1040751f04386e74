export type {
  ActResult,
  BrowserService,
  BrowserStatus,
  CallOptions,
  NavigateResult,
  SnapshotResult,
  SnapshotTextResult,
  TabInfo,
} from './browser-service.js';
export { createBrowserService } from './browser-service.js';
export type { BrowserErrorCode, BrowserErrorOptions } from './errors.js';
export { BrowserError, isBrowserError } from './errors.js';
export type { ActAction, ActParams } from './internal/actions.js';
export { ACT_ACTIONS } from './internal/actions.js';
export type { ConsoleEntry } from './internal/console-buffer.js';
export type { SnapshotNode } from './internal/snapshot.js';
export type { BrowserLogger } from './logger.js';
export { noopLogger } from './logger.js';
export type { BrowserSection, BrowserServiceOptions, ResolveHost } from './options.js';
export { browserSectionSchema } from './options.js';
export { browserParamSchemas } from './params.js';
export type { AgentTool, ToolContext } from './tools.js';
export { createBrowserTools } from './tools.js';
export { findExecutable as findBrowserExecutable } from './internal/executable.js';
