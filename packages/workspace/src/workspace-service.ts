import { access, mkdir, stat, unlink } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { invalid, WorkspaceError } from './errors.js';
import {
  clearEdits,
  type PendingEdit,
  pendingEdits,
  recordEdit,
  sanitiseMessage,
  type WorkspaceActor,
  withAttribution,
} from './internal/attribution.js';
import {
  type DirEntry,
  deleteConfined,
  type FileContent,
  listConfined,
  readConfined,
  writeConfined,
} from './internal/files.js';
import { type CommitInfo, type StatusEntry, WorkspaceGit } from './internal/git.js';
import { KeyedMutex } from './internal/mutex.js';
import { confine, fileNotFound, normalisePath, workspacePath } from './internal/paths.js';
import { WORKSPACE_TEMPLATES } from './internal/templates.js';
import { parseServiceOptions } from './internal/settings.js';
import type { WorkspaceSection, WorkspaceServiceOptions } from './options.js';

export type { DirEntry, FileContent } from './internal/files.js';
export type { CommitInfo, StatusEntry } from './internal/git.js';
export type { PendingEdit, WorkspaceActor } from './internal/attribution.js';

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
    edit: { path: string; oldText: string; newText: string; replaceAll?: boolean | undefined },
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
  /** Commits everything, with one trailer per recorded edit; `committed: false` when nothing changed. */
  gitCommit(
    agentId: string,
    message: string,
    actor?: WorkspaceActor,
  ): Promise<{ committed: boolean; sha: string; files: number }>;
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
    query: { pattern: string; path?: string; regex?: boolean; ignoreCase?: boolean },
  ): Promise<{ matches: Array<{ path: string; line: number; text: string }>; truncated: boolean }>;
  /** Files (tracked and untracked, not ignored) matching a glob such as `notes/**\/*.md`. */
  glob(agentId: string, pattern: string): Promise<{ files: string[]; truncated: boolean }>;
  /** Applies a new `workspace` config section to the next call. */
  applyConfig(section: unknown): void;
}

/** Creates the workspace service of a data directory. Nothing is created until a call needs it. */
export function createWorkspaceService(options: WorkspaceServiceOptions): WorkspaceService {
  const parsed = parseServiceOptions(options);
  let settings: WorkspaceSection = parsed.section;
  const { dataDir, logger, now } = parsed;
  const mutex = new KeyedMutex();
  const repositories = new Map<string, WorkspaceGit>();

  const gitOf = (agentId: string): WorkspaceGit => {
    const root = workspacePath(dataDir, agentId);
    let git = repositories.get(root);
    if (!git) {
      git = new WorkspaceGit(root, { author: settings.author, timeoutMs: settings.gitTimeoutMs });
      repositories.set(root, git);
    }
    return git;
  };
  const initialized = (root: string) =>
    access(join(root, '.git', 'HEAD')).then(
      () => true,
      () => false,
    );

  /** The repository of an initialised workspace; creates it first when allowed. */
  async function ready(agentId: string, create: boolean): Promise<WorkspaceGit> {
    const git = gitOf(agentId);
    if (await initialized(git.root)) return git;
    if (!create || !settings.autoInit) {
      throw new WorkspaceError(
        'NOT_INITIALIZED',
        `The workspace of agent ${agentId} is not initialised; call workspace.init`,
        {
          data: { agentId },
        },
      );
    }
    await init(agentId);
    return git;
  }

  /** Runs a change under the workspace's lock, after clearing a stale index lock. */
  function exclusive<T>(git: WorkspaceGit, task: () => Promise<T>): Promise<T> {
    return mutex.run(git.root, async () => {
      await clearStaleLock(git.root);
      return task();
    });
  }

  async function clearStaleLock(root: string): Promise<void> {
    const lock = join(root, '.git', 'index.lock');
    const stats = await stat(lock).catch(() => undefined);
    if (!stats) return;
    // Every git of this service runs under the lock we hold, so a lock this old belongs to a
    // git that died (or to a foreign one that stalled for minutes); a younger one is left alone.
    const age = now() - stats.mtimeMs;
    if (age < settings.staleLockMs) return;
    await unlink(lock).catch(() => undefined);
    logger.info({ ageMs: Math.round(age) }, 'workspace: removed a stale git index lock');
  }

  async function init(agentId: string) {
    const git = gitOf(agentId);
    return mutex.run(git.root, async () => {
      if (await initialized(git.root)) {
        return { agentId, created: false, head: (await git.head()) ?? '' };
      }
      await mkdir(git.root, { recursive: true, mode: 0o700 });
      await git.init();
      for (const [name, content] of WORKSPACE_TEMPLATES) {
        const target = await confine(git.root, name, 'path');
        // A directory made before (a cron wake gate runs there) keeps the files it has.
        if (!target.stats) await writeConfined(target, content);
      }
      const head = await git.commitAll('workspace: initial template', now());
      logger.info({ agentId }, 'workspace: initialised');
      return { agentId, created: true, head };
    });
  }

  async function record(
    git: WorkspaceGit,
    action: PendingEdit['action'],
    path: string,
    actor: WorkspaceActor,
  ) {
    await recordEdit(git.root, { ts: now(), actor, action, path });
  }

  const operator: WorkspaceActor = { kind: 'operator' };

  async function writeFile(agentId: string, rawPath: string, content: string, actor = operator) {
    const path = normalisePath(rawPath, 'path');
    const bytes = Buffer.byteLength(content);
    if (bytes > settings.maxWriteBytes) {
      throw new WorkspaceError(
        'TOO_LARGE',
        `content is ${bytes} bytes; the limit is ${settings.maxWriteBytes}`,
        {
          data: { field: 'content', bytes, maxWriteBytes: settings.maxWriteBytes },
        },
      );
    }
    const git = await ready(agentId, true);
    return exclusive(git, async () => {
      const created = await writeConfined(await confine(git.root, path, 'path'), content);
      await record(git, 'write', path, actor);
      return { path, bytes, created };
    });
  }

  async function editFile(
    agentId: string,
    edit: { path: string; oldText: string; newText: string; replaceAll?: boolean | undefined },
    actor = operator,
  ) {
    const path = normalisePath(edit.path, 'path');
    if (edit.oldText === '') throw invalid('INVALID_PARAMS', 'oldText', 'oldText must not be empty');
    const git = await ready(agentId, true);
    return exclusive(git, async () => {
      const target = await confine(git.root, path, 'path');
      const file = await readConfined(target, settings.maxWriteBytes);
      if (file.binary)
        throw invalid('INVALID_PATH', 'path', 'path is a binary file; it cannot be edited as text');
      if (file.truncated)
        throw new WorkspaceError('TOO_LARGE', `path is over ${settings.maxWriteBytes} bytes`, {
          data: { field: 'path' },
        });
      const count = file.content.split(edit.oldText).length - 1;
      if (count === 0) throw invalid('INVALID_PARAMS', 'oldText', 'oldText does not occur in the file');
      if (count > 1 && !edit.replaceAll) {
        throw invalid(
          'INVALID_PARAMS',
          'oldText',
          `oldText occurs ${count} times; give more context or set replaceAll`,
        );
      }
      const next = edit.replaceAll
        ? file.content.split(edit.oldText).join(edit.newText)
        : file.content.replace(edit.oldText, () => edit.newText);
      if (Buffer.byteLength(next) > settings.maxWriteBytes) {
        throw new WorkspaceError(
          'TOO_LARGE',
          `the edited file would be over ${settings.maxWriteBytes} bytes`,
          { data: { field: 'newText' } },
        );
      }
      await writeConfined(target, next);
      await record(git, 'edit', path, actor);
      return { path, replacements: edit.replaceAll ? count : 1 };
    });
  }

  async function deleteFile(agentId: string, rawPath: string, actor = operator) {
    const path = normalisePath(rawPath, 'path');
    const git = await ready(agentId, true);
    return exclusive(git, async () => {
      // The whole path first: a symlink leading out (or nowhere) is refused even though only
      // the link itself would be removed, as every other call refuses it.
      await confine(git.root, path, 'path');
      const parent = await confine(git.root, posix.dirname(path) === '.' ? '' : posix.dirname(path), 'path');
      if (!parent.stats?.isDirectory()) throw fileNotFound(path);
      await deleteConfined(parent, posix.basename(path), path);
      await record(git, 'delete', path, actor);
      return { path, deleted: true as const };
    });
  }

  /** A caller's revision: a hex sha or `HEAD`, `HEAD~n`; resolved to a full sha of this repository. */
  async function revision(git: WorkspaceGit, sha: string | undefined): Promise<string> {
    const reference = sha ?? 'HEAD';
    if (!/^(?:[0-9a-fA-F]{4,64}|HEAD(?:~\d{1,5})?)$/.test(reference)) {
      throw invalid('UNKNOWN_REVISION', 'sha', 'sha must be a commit hash (4-64 hex digits) or HEAD~n');
    }
    const full = await git.resolveCommit(reference);
    if (!full) throw invalid('UNKNOWN_REVISION', 'sha', `No commit ${reference} in the workspace`);
    return full;
  }

  async function restoreFrom(git: WorkspaceGit, path: string, sha: string | undefined) {
    const full = await revision(git, sha);
    await confine(git.root, path, 'path');
    if (!(await git.existsAt(full, path))) throw fileNotFound(path);
    await git.restore(full, path);
    return full;
  }

  return {
    path: (agentId) => workspacePath(dataDir, agentId),
    ensure: async (agentId) => (await ready(agentId, true)).root,
    async status(agentId) {
      const git = gitOf(agentId);
      if (!(await initialized(git.root))) return { agentId, initialized: false, changed: 0, pendingEdits: 0 };
      const [branch, head, files, edits] = await Promise.all([
        git.branch(),
        git.head(),
        git.status(),
        pendingEdits(git.root),
      ]);
      return { agentId, initialized: true, branch, head, changed: files.length, pendingEdits: edits.length };
    },
    init,
    async readFile(agentId, rawPath, options = {}) {
      const path = normalisePath(rawPath, 'path');
      const git = await ready(agentId, options.create ?? false);
      return readConfined(await confine(git.root, path, 'path'), settings.maxReadBytes);
    },
    writeFile,
    editFile,
    deleteFile,
    async listDir(agentId, rawPath = '', options = {}) {
      const path = normalisePath(rawPath, 'path', true);
      const git = await ready(agentId, options.create ?? false);
      return listConfined(await confine(git.root, path, 'path'), settings.maxListEntries, path === '');
    },
    async resetFile(agentId, rawPath, sha, actor = operator) {
      const path = normalisePath(rawPath, 'path');
      const git = await ready(agentId, true);
      return exclusive(git, async () => {
        const template = WORKSPACE_TEMPLATES.get(path);
        if (sha === undefined && template !== undefined) {
          await writeConfined(await confine(git.root, path, 'path'), template);
          await record(git, 'reset', path, actor);
          return { path, source: 'template' as const };
        }
        const target = await confine(git.root, path, 'path');
        if (target.stats?.isDirectory())
          throw invalid('INVALID_PATH', 'path', 'path is a directory; use git.restore');
        const full = await restoreFrom(git, path, sha);
        await record(git, 'reset', path, actor);
        return { path, source: 'commit' as const, sha: full };
      });
    },
    async gitStatus(agentId) {
      const git = await ready(agentId, false);
      const [branch, head, files] = await Promise.all([git.branch(), git.head(), git.status()]);
      return { branch, head, clean: files.length === 0, files: files.slice(0, settings.maxListEntries) };
    },
    async gitLog(agentId, limit = 20) {
      const git = await ready(agentId, false);
      return { commits: await git.log(Math.min(limit, settings.maxListEntries)) };
    },
    async gitDiff(agentId, rawPath = '') {
      const path = normalisePath(rawPath, 'path', true);
      const git = await ready(agentId, false);
      await confine(git.root, path, 'path');
      const [full, untracked] = await Promise.all([git.diff(path), git.untracked(path)]);
      const bytes = Buffer.from(full);
      const truncated = bytes.length > settings.maxDiffBytes;
      const diff = truncated
        ? new TextDecoder().decode(bytes.subarray(0, settings.maxDiffBytes), { stream: true })
        : full;
      return { diff, truncated, untracked: untracked.slice(0, settings.maxListEntries) };
    },
    async gitCommit(agentId, rawMessage, actor = operator) {
      const message = sanitiseMessage(rawMessage, settings.maxCommitMessageChars);
      const git = await ready(agentId, true);
      return exclusive(git, async () => {
        const files = (await git.status()).length;
        if (files === 0) {
          await clearEdits(git.root);
          return { committed: false, sha: (await git.head()) ?? '', files: 0 };
        }
        const edits = await pendingEdits(git.root);
        const by =
          actor.kind === 'operator' && actor.caller
            ? `\n\nCommitted-By: operator (token ${actor.caller})`
            : '';
        const sha = await git.commitAll(withAttribution(`${message}${by}`, edits), now());
        await clearEdits(git.root);
        return { committed: true, sha, files };
      });
    },
    async gitRestore(agentId, rawPath, sha, actor = operator) {
      const path = normalisePath(rawPath, 'path');
      const git = await ready(agentId, true);
      return exclusive(git, async () => {
        const full = await restoreFrom(git, path, sha);
        await record(git, 'restore', path, actor);
        return { path, sha: full };
      });
    },
    async grep(agentId, query) {
      const path = normalisePath(query.path ?? '', 'path', true);
      if (query.pattern === '') throw invalid('INVALID_PARAMS', 'pattern', 'pattern must not be empty');
      const git = await ready(agentId, true);
      await confine(git.root, path, 'path');
      const output = await git.grep(query.pattern, {
        path,
        regex: query.regex ?? false,
        ignoreCase: query.ignoreCase ?? false,
      });
      const matches: Array<{ path: string; line: number; text: string }> = [];
      let total = 0;
      for (const record of output.split('\n')) {
        // -z separates file and line number with NUL: `<path>\0<line>\0<text>`.
        const [file, line, ...rest] = record.split('\0');
        if (!file || line === undefined) continue;
        total++;
        if (matches.length < settings.maxGrepMatches) {
          matches.push({ path: file, line: Number(line), text: [...rest.join('\0')].slice(0, 500).join('') });
        }
      }
      return { matches, truncated: total > matches.length };
    },
    async glob(agentId, pattern) {
      if (pattern === '' || pattern.includes('\0'))
        throw invalid('INVALID_PARAMS', 'pattern', 'pattern must be a non-empty glob');
      if (pattern.startsWith('/') || pattern.split('/').includes('..')) {
        throw invalid(
          'INVALID_PATH',
          'pattern',
          'pattern must be relative to the workspace root, without ..',
        );
      }
      const git = await ready(agentId, true);
      const files = await git.glob(pattern);
      return {
        files: files.slice(0, settings.maxListEntries),
        truncated: files.length > settings.maxListEntries,
      };
    },
    applyConfig(section) {
      settings = parseServiceOptions({ ...(section as object), dataDir }).section;
      repositories.clear();
    },
  };
}
