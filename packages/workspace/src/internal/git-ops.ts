import { invalid } from '../errors.js';
import {
  clearEdits,
  pendingEdits,
  sanitiseMessage,
  type WorkspaceActor,
  withAttribution,
} from './attribution.js';
import type { WorkspaceContext } from './context.js';
import type { CommitInfo, StatusEntry } from './git.js';
import { confine, normalisePath } from './paths.js';

/** The git operations of the workspace service; each takes the shared context first. */

export async function status(ctx: WorkspaceContext, agentId: string) {
  const git = ctx.gitOf(agentId);
  if (!(await ctx.initialized(git))) return { agentId, initialized: false, changed: 0, pendingEdits: 0 };
  const [branch, head, files, edits] = await Promise.all([
    git.branch(),
    git.head(),
    git.status(),
    pendingEdits(git.gitDir),
  ]);
  return { agentId, initialized: true, branch, head, changed: files.length, pendingEdits: edits.length };
}

export async function gitStatus(
  ctx: WorkspaceContext,
  agentId: string,
): Promise<{ branch?: string | undefined; head?: string | undefined; clean: boolean; files: StatusEntry[] }> {
  const git = await ctx.ready(agentId, false);
  const [branch, head, files] = await Promise.all([git.branch(), git.head(), git.status()]);
  return { branch, head, clean: files.length === 0, files: files.slice(0, ctx.settings.maxListEntries) };
}

export async function gitLog(
  ctx: WorkspaceContext,
  agentId: string,
  limit: number,
): Promise<{ commits: CommitInfo[] }> {
  const git = await ctx.ready(agentId, false);
  return { commits: await git.log(Math.min(limit, ctx.settings.maxListEntries)) };
}

export async function gitDiff(
  ctx: WorkspaceContext,
  agentId: string,
  rawPath: string,
): Promise<{ diff: string; truncated: boolean; untracked: string[] }> {
  const path = normalisePath(rawPath, 'path', true);
  const git = await ctx.ready(agentId, false);
  await confine(git.root, path, 'path');
  const [full, untracked] = await Promise.all([git.diff(path), git.untracked(path)]);
  const { maxDiffBytes, maxListEntries } = ctx.settings;
  const bytes = Buffer.from(full);
  const truncated = bytes.length > maxDiffBytes;
  // Cut on a character boundary: a streaming decode holds back a split multi-byte character.
  const diff = truncated ? new TextDecoder().decode(bytes.subarray(0, maxDiffBytes), { stream: true }) : full;
  return { diff, truncated, untracked: untracked.slice(0, maxListEntries) };
}

export async function gitCommit(
  ctx: WorkspaceContext,
  agentId: string,
  rawMessage: string,
  actor: WorkspaceActor,
): Promise<{ committed: boolean; sha: string; files: number; skipped?: string[] }> {
  const message = sanitiseMessage(rawMessage, ctx.settings.maxCommitMessageChars);
  const git = await ctx.ready(agentId, true);
  return ctx.exclusive(git, async () => {
    const changed = await git.status();
    const nested = changed.filter((entry) => entry.index === '?' && entry.path.endsWith('/'));
    const files = changed.length - nested.length;
    const skipped = nested.length > 0 ? { skipped: nested.map((entry) => entry.path.slice(0, -1)) } : {};
    if (files === 0) return { committed: false, sha: (await git.head()) ?? '', files: 0, ...skipped };
    const edits = await pendingEdits(git.gitDir);
    const by =
      actor.kind === 'operator' && actor.caller ? `\n\nCommitted-By: operator (token ${actor.caller})` : '';
    const { sha } = await git.commitAll(withAttribution(`${message}${by}`, edits), ctx.now());
    await clearEdits(git.gitDir);
    return { committed: true, sha, files, ...skipped };
  });
}

export async function gitRestore(
  ctx: WorkspaceContext,
  agentId: string,
  rawPath: string,
  sha: string | undefined,
  actor: WorkspaceActor,
): Promise<{ path: string; sha: string }> {
  const path = normalisePath(rawPath, 'path');
  const git = await ctx.ready(agentId, true);
  return ctx.exclusive(git, async () => {
    const full = await ctx.restoreFrom(git, path, sha);
    await ctx.record(git, 'restore', path, actor);
    return { path, sha: full };
  });
}

/** A grep query of the agent tool. */
export interface GrepQuery {
  pattern: string;
  path?: string | undefined;
  regex?: boolean | undefined;
  ignoreCase?: boolean | undefined;
}

export async function grep(
  ctx: WorkspaceContext,
  agentId: string,
  query: GrepQuery,
): Promise<{ matches: Array<{ path: string; line: number; text: string }>; truncated: boolean }> {
  const path = normalisePath(query.path ?? '', 'path', true);
  if (query.pattern === '') throw invalid('INVALID_PARAMS', 'pattern', 'pattern must not be empty');
  const git = await ctx.ready(agentId, true);
  await confine(git.root, path, 'path');
  const output = await git.grep(query.pattern, {
    path,
    regex: query.regex ?? false,
    ignoreCase: query.ignoreCase ?? false,
  });
  const matches: Array<{ path: string; line: number; text: string }> = [];
  let total = 0;
  for (const record of output.split('\n')) {
    // -z separates the path and the line number with NUL: `<path>\0<line>\0<text>`.
    const [file, line, ...rest] = record.split('\0');
    if (!file || line === undefined) continue;
    total++;
    if (matches.length < ctx.settings.maxGrepMatches) {
      matches.push({ path: file, line: Number(line), text: [...rest.join('\0')].slice(0, 500).join('') });
    }
  }
  return { matches, truncated: total > matches.length };
}

export async function glob(
  ctx: WorkspaceContext,
  agentId: string,
  pattern: string,
): Promise<{ files: string[]; truncated: boolean }> {
  if (pattern === '' || pattern.includes('\0')) {
    throw invalid('INVALID_PARAMS', 'pattern', 'pattern must be a non-empty glob');
  }
  if (pattern.startsWith('/') || pattern.split('/').includes('..')) {
    throw invalid('INVALID_PATH', 'pattern', 'pattern must be relative to the workspace root, without ..');
  }
  const git = await ctx.ready(agentId, true);
  const files = await git.glob(pattern);
  const max = ctx.settings.maxListEntries;
  return { files: files.slice(0, max), truncated: files.length > max };
}
