import { constants, type Stats } from 'node:fs';
import { lstat, realpath } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import { invalid, WorkspaceError } from '../errors.js';

/**
 * An agent id is one safe path segment, the rule cron jobs name agents by (a superset of the
 * config's agent ids). Never starting with a dot keeps it apart from `.history`.
 */
const AGENT_ID = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$/;

/** Refuses an agent id that could not name a directory of its own (`..`, `a/b`, empty). */
export function checkAgentId(agentId: string): string {
  if (!AGENT_ID.test(agentId)) {
    throw invalid(
      'INVALID_PARAMS',
      'agentId',
      'agentId must be 1-64 letters, digits, dot, underscore or dash, not starting with a dot',
    );
  }
  return agentId;
}

/** `<dataDir>/workspaces/<agentId>`, absolute; the agent id is checked first. */
export function workspacePath(dataDir: string, agentId: string): string {
  return resolve(dataDir, 'workspaces', checkAgentId(agentId));
}

/**
 * The git directory of an agent's workspace: `<dataDir>/workspaces/.history/<agentId>.git`,
 * outside the work tree, so nothing that can write in the workspace (an agent's tools, a
 * terminal drive, the orchestrate jail) can change the repository's config or hooks, and the
 * workspace is never a repository nested in the data directory's. `.history` cannot collide
 * with an agent's directory: agent ids never start with a dot.
 */
export function historyPath(dataDir: string, agentId: string): string {
  return resolve(dataDir, 'workspaces', '.history', `${checkAgentId(agentId)}.git`);
}

/**
 * Environment for a program run in an agent's workspace (a terminal drive): `git` there works
 * on the workspace's own repository, never on one found by searching upward (the data
 * directory is the config history's repository), and commits made there name the agent.
 */
export function workspaceGitEnv(dataDir: string, agentId: string): Record<string, string> {
  const name = `agent ${checkAgentId(agentId)}`;
  const email = `${agentId}@agents.agentd.invalid`;
  return {
    GIT_DIR: historyPath(dataDir, agentId),
    GIT_WORK_TREE: workspacePath(dataDir, agentId),
    GIT_AUTHOR_NAME: name,
    GIT_AUTHOR_EMAIL: email,
    GIT_COMMITTER_NAME: name,
    GIT_COMMITTER_EMAIL: email,
  };
}

/**
 * The lexical checks of a caller's path: relative, no `..`, no `.git` segment, no NUL or
 * backslash (a Windows separator some tools would honour). Answers the normalised form
 * (`a/b`, without `./` or duplicate slashes); `''` is the root, allowed only with `allowRoot`.
 */
export function normalisePath(raw: string, field: string, allowRoot = false): string {
  const refuse = (why: string): never => {
    throw invalid('INVALID_PATH', field, `${field} ${why}`);
  };
  if (raw.includes('\0')) refuse('contains a NUL character');
  if (raw.includes('\\')) refuse('contains a backslash; use / between segments');
  if (raw.startsWith('/') || /^[A-Za-z]:/.test(raw)) refuse('must be relative to the workspace root');
  const segments: string[] = [];
  for (const segment of raw.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') refuse('must not contain ..');
    // Case-insensitive: on a case-folding file system `.GIT` is the repository too.
    if (segment.toLowerCase() === '.git') refuse('must not name the .git directory');
    segments.push(segment);
  }
  if (segments.length === 0 && !allowRoot) refuse('must name a file inside the workspace');
  return segments.join('/');
}

/** Where a confined path leads: the real absolute path and, when something is there, its stats. */
export interface Confined {
  /** The caller's path, normalised (what git and answers use). */
  path: string;
  /** Absolute path with every symlink of existing components resolved. */
  absolute: string;
  /** lstat of `absolute`; undefined when nothing is there yet. */
  stats: Stats | undefined;
}

function isInside(rootReal: string, candidate: string): boolean {
  if (candidate !== rootReal && !candidate.startsWith(rootReal + sep)) return false;
  const gitDir = join(rootReal, '.git');
  return candidate !== gitDir && !candidate.startsWith(gitDir + sep);
}

/**
 * Resolves `path` (already normalised) under `root`, component by component, refusing a
 * symlink that leads outside the root or into `.git`, a dangling symlink (writing through it
 * would create its target wherever it points) and a file with more than one hard link (its
 * other names may be outside). A component that does not exist ends the walk: the rest will
 * be created under a checked directory.
 */
export async function confine(root: string, path: string, field: string): Promise<Confined> {
  const rootReal = await realpath(root);
  let current = rootReal;
  const segments = path === '' ? [] : path.split('/');
  for (let index = 0; index < segments.length; index++) {
    const next = join(current, segments[index] as string);
    let stats: Stats;
    try {
      stats = await lstat(next);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        return { path, absolute: join(next, ...segments.slice(index + 1)), stats: undefined };
      }
      throw error;
    }
    if (stats.isSymbolicLink()) {
      let target: string;
      try {
        target = await realpath(next);
      } catch {
        throw invalid('INVALID_PATH', field, `${field} goes through a symlink that points nowhere`);
      }
      if (!isInside(rootReal, target)) {
        throw invalid(
          'INVALID_PATH',
          field,
          `${field} goes through a symlink that leads outside the workspace`,
        );
      }
      current = target;
    } else {
      current = next;
    }
  }
  const stats = path === '' ? await lstat(current) : await lstat(current).catch(() => undefined);
  if (stats?.isFile() && stats.nlink > 1) {
    throw invalid(
      'INVALID_PATH',
      field,
      `${field} is a hard link; its other names may be outside the workspace`,
    );
  }
  return { path, absolute: current, stats };
}

/** Flags that open an existing file for reading without following a symlink swapped in since the check. */
export const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW;

/** Refuses a file descriptor's target that gained a second name after the check. */
export function checkOpened(stats: Stats, field: string): void {
  if (!stats.isFile()) throw invalid('INVALID_PATH', field, `${field} is not a regular file`);
  if (stats.nlink > 1) {
    throw invalid(
      'INVALID_PATH',
      field,
      `${field} is a hard link; its other names may be outside the workspace`,
    );
  }
}

/** An error for a path with nothing there. */
export function fileNotFound(path: string): WorkspaceError {
  return new WorkspaceError('FILE_NOT_FOUND', `No such file in the workspace: ${path}`, { data: { path } });
}
