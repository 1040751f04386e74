export type { WorkspaceErrorCode, WorkspaceErrorOptions } from './errors.js';
export { isWorkspaceError, WorkspaceError } from './errors.js';
export {
  checkAgentId,
  historyPath as workspaceHistoryPath,
  workspaceGitEnv,
  workspacePath,
} from './internal/paths.js';
export { WORKSPACE_TEMPLATES } from './internal/templates.js';
export { noopLogger } from './internal/settings.js';
export type { WorkspaceSection, WorkspaceServiceOptions } from './options.js';
export { workspaceSectionSchema } from './options.js';
export type { AgentTool, ToolContext } from './tools.js';
export { createWorkspaceTools, workspaceToolSchemas } from './tools.js';
export type {
  CommitInfo,
  DirEntry,
  FileContent,
  PendingEdit,
  StatusEntry,
  UseOptions,
  WorkspaceActor,
  WorkspaceService,
  WorkspaceStatus,
  WriteResult,
} from './workspace-service.js';
export { createWorkspaceService } from './workspace-service.js';
