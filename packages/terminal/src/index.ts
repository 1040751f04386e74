export type { TerminalErrorCode, TerminalErrorOptions } from './errors.js';
export { isTerminalError, TerminalError } from './errors.js';
export { KEY_NAMES } from './internal/keys.js';
export { noopLogger } from './internal/settings.js';
export type { TerminalSection, TerminalServiceOptions } from './options.js';
export { terminalSectionSchema } from './options.js';
export type {
  DriveContext,
  DriveExit,
  DriveInfo,
  DriveScreen,
  EvictionReason,
  ScreenText,
  TerminalService,
} from './terminal-service.js';
export { createTerminalService } from './terminal-service.js';
export type { AgentTool, ToolContext } from './tools.js';
export { createTerminalTools, terminalToolSchemas } from './tools.js';
