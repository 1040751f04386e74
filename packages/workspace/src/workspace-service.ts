import type { WorkspaceActor } from './internal/attribution.js';
import { WorkspaceContext } from './internal/context.js';
import * as fileOps from './internal/file-ops.js';
import { OPERATOR, type TextEdit } from './internal/file-ops.js';
import type { DirEntry, FileContent } from './internal/files.js';
import type { CommitInfo, StatusEntry } from './internal/git.js';
import * as gitOps from './internal/git-ops.js';
import type { GrepQuery } from './internal/git-ops.js';
import { workspacePath } from './internal/paths.js';
import { parseServiceOptions } from './internal/settings.js';
import type { WorkspaceServiceOptions } from './options.js';

export type { DirEntry, FileContent } from './internal/files.js';
export type { CommitInfo, StatusEntry } from './internal/git.js';
export type { PendingEdit, WorkspaceActor } from './internal/attribution.js';
export type { TextEdit } from './internal/file-ops.js';
export type { GrepQuery } from './internal/git-ops.js';

/** `workspace.status`: whether the workspace exists and how far it is from its last commit. */
export interface WorkspaceStatus {
  agentId: string;
  initialized: boolean;
  branch?: string | undefined;
  head?: string | undefined;
  /** Changed or untracked paths. */
  changed: number;
  /** Changes recorded for attribution in the next commit. */
  pendingEdits: number;
}

/** How a reading call treats a workspace that does not exist yet. */
export interface UseOptions {
  /** Create it (when `autoInit` is on) instead of failing with `NOT_INITIALIZED`. @default false */
  create?: boolean;
}

/** What a writing call answers. */
export interface WriteResult {
  path: string;
  bytes: number;
  created: boolean;
}

/** The per-agent workspaces of one data directory. Every path is relative to the agent's root. */
export interface WorkspaceService {
  /** The absolute root of an agent's workspace (nothing is created). */
  path(agentId: string): string;
  /**
   * The root of an agent's workspace once it exists: created first while `autoInit` is on,
   * else `NOT_INITIALIZED`. For what runs in the workspace (terminal drives, generated files).
   */
  ensure(agentId: string): Promise<string>;
  status(agentId: string): Promise<WorkspaceStatus>;
  /** Creates the repository with the template files as its first commit; no effect when it exists. */
  init(agentId: string): Promise<{ agentId: string; created: boolean; head: string }>;
  /** Reads a file; `create` lets the call create the workspace first (an agent's first use). */
  readFile(agentId: string, path: string, options?: UseOptions): Promise<FileContent>;
  writeFile(agentId: string, path: string, content: string, actor?: WorkspaceActor): Promise<WriteResult>;
  /** Replaces `oldText` by `newText`: it must occur exactly once unless `replaceAll`. */
  editFile(
    agentId: string,
    edit: TextEdit,
    actor?: WorkspaceActor,
  ): Promise<{ path: string; replacements: number }>;
  deleteFile(agentId: string, path: string, actor?: WorkspaceActor): Promise<{ path: string; deleted: true }>;
  listDir(
    agentId: string,
    path?: string,
    options?: UseOptions,
  ): Promise<{ path: string; entries: DirEntry[]; truncated: boolean }>;
  /** Restores a file from commit `sha`, else from the template set, else from HEAD. */
  resetFile(
    agentId: string,
    path: string,
    sha?: string,
    actor?: WorkspaceActor,
  ): Promise<{ path: string; source: 'template' | 'commit'; sha?: string }>;
  gitStatus(agentId: string): Promise<{
    branch?: string | undefined;
    head?: string | undefined;
    clean: boolean;
    files: StatusEntry[];
  }>;
  gitLog(agentId: string, limit?: number): Promise<{ commits: CommitInfo[] }>;
  /** Working tree against HEAD (tracked files) and the untracked paths, capped. */
  gitDiff(agentId: string, path?: string): Promise<{ diff: string; truncated: boolean; untracked: string[] }>;
  /**
   * Commits everything, with one trailer per recorded edit; `committed: false` when nothing
   * changed. Repositories nested in the work tree are left out and listed in `skipped`.
   */
  gitCommit(
    agentId: string,
    message: string,
    actor?: WorkspaceActor,
  ): Promise<{ committed: boolean; sha: string; files: number; skipped?: string[] }>;
  /** Puts a path (file or directory) back as it is in commit `sha` (default HEAD). */
  gitRestore(
    agentId: string,
    path: string,
    sha?: string,
    actor?: WorkspaceActor,
  ): Promise<{ path: string; sha: string }>;
  /** Lines matching a fixed string (or an extended regex), tracked and untracked text files. */
  grep(
    agentId: string,
    query: GrepQuery,
  ): Promise<{ matches: Array<{ path: string; line: number; text: string }>; truncated: boolean }>;
  /** Files (tracked and untracked, not ignored) matching a glob such as `notes/**\/*.md`. */
  glob(agentId: string, pattern: string): Promise<{ files: string[]; truncated: boolean }>;
  /** Applies a new `workspace` config section to the next call. */
  applyConfig(section: unknown): void;
}

/** Creates the workspace service of a data directory. Nothing is created until a call needs it. */
export function createWorkspaceService(options: WorkspaceServiceOptions): WorkspaceService {
  const { section, dataDir, logger, now } = parseServiceOptions(options);
  const ctx = new WorkspaceContext(section, dataDir, logger, now);
  return {
    path: (agentId) => workspacePath(dataDir, agentId),
    ensure: async (agentId) => (await ctx.ready(agentId, true)).root,
    status: (agentId) => gitOps.status(ctx, agentId),
    init: (agentId) => ctx.init(agentId),
    readFile: (agentId, path, use = {}) => fileOps.readFile(ctx, agentId, path, use.create ?? false),
    writeFile: (agentId, path, content, actor = OPERATOR) =>
      fileOps.writeFile(ctx, agentId, path, content, actor),
    editFile: (agentId, edit, actor = OPERATOR) => fileOps.editFile(ctx, agentId, edit, actor),
    deleteFile: (agentId, path, actor = OPERATOR) => fileOps.deleteFile(ctx, agentId, path, actor),
    listDir: (agentId, path = '', use = {}) => fileOps.listDir(ctx, agentId, path, use.create ?? false),
    resetFile: (agentId, path, sha, actor = OPERATOR) => fileOps.resetFile(ctx, agentId, path, sha, actor),
    gitStatus: (agentId) => gitOps.gitStatus(ctx, agentId),
    gitLog: (agentId, limit = 20) => gitOps.gitLog(ctx, agentId, limit),
    gitDiff: (agentId, path = '') => gitOps.gitDiff(ctx, agentId, path),
    gitCommit: (agentId, message, actor = OPERATOR) => gitOps.gitCommit(ctx, agentId, message, actor),
    gitRestore: (agentId, path, sha, actor = OPERATOR) => gitOps.gitRestore(ctx, agentId, path, sha, actor),
    grep: (agentId, query) => gitOps.grep(ctx, agentId, query),
    glob: (agentId, pattern) => gitOps.glob(ctx, agentId, pattern),
    applyConfig(next) {
      ctx.apply(parseServiceOptions({ ...(next as object), dataDir }).section);
    },
  };
}
