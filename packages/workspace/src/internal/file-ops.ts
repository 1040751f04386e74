import { posix } from 'node:path';
import { invalid, WorkspaceError } from '../errors.js';
import type { WorkspaceActor } from './attribution.js';
import type { WorkspaceContext } from './context.js';
import {
  type DirEntry,
  deleteConfined,
  type FileContent,
  listConfined,
  readConfined,
  writeConfined,
} from './files.js';
import { confine, fileNotFound, normalisePath } from './paths.js';
import { WORKSPACE_TEMPLATES } from './templates.js';

/** The file operations of the workspace service; each takes the shared context first. */

export const OPERATOR: WorkspaceActor = { kind: 'operator' };

export async function readFile(
  ctx: WorkspaceContext,
  agentId: string,
  rawPath: string,
  create: boolean,
): Promise<FileContent> {
  const path = normalisePath(rawPath, 'path');
  const git = await ctx.ready(agentId, create);
  return readConfined(await confine(git.root, path, 'path'), ctx.settings.maxReadBytes);
}

export async function listDir(
  ctx: WorkspaceContext,
  agentId: string,
  rawPath: string,
  create: boolean,
): Promise<{ path: string; entries: DirEntry[]; truncated: boolean }> {
  const path = normalisePath(rawPath, 'path', true);
  const git = await ctx.ready(agentId, create);
  return listConfined(await confine(git.root, path, 'path'), ctx.settings.maxListEntries, path === '');
}

export async function writeFile(
  ctx: WorkspaceContext,
  agentId: string,
  rawPath: string,
  content: string,
  actor: WorkspaceActor,
): Promise<{ path: string; bytes: number; created: boolean }> {
  const path = normalisePath(rawPath, 'path');
  const bytes = Buffer.byteLength(content);
  const { maxWriteBytes } = ctx.settings;
  if (bytes > maxWriteBytes) {
    throw new WorkspaceError('TOO_LARGE', `content is ${bytes} bytes; the limit is ${maxWriteBytes}`, {
      data: { field: 'content', bytes, maxWriteBytes },
    });
  }
  const git = await ctx.ready(agentId, true);
  return ctx.exclusive(git, async () => {
    const created = await writeConfined(await confine(git.root, path, 'path'), content);
    await ctx.record(git, 'write', path, actor);
    return { path, bytes, created };
  });
}

/** An exact-text edit: `oldText` must occur once unless `replaceAll`. */
export interface TextEdit {
  path: string;
  oldText: string;
  newText: string;
  replaceAll?: boolean | undefined;
}

export async function editFile(
  ctx: WorkspaceContext,
  agentId: string,
  edit: TextEdit,
  actor: WorkspaceActor,
): Promise<{ path: string; replacements: number }> {
  const path = normalisePath(edit.path, 'path');
  if (edit.oldText === '') throw invalid('INVALID_PARAMS', 'oldText', 'oldText must not be empty');
  const git = await ctx.ready(agentId, true);
  return ctx.exclusive(git, async () => {
    const { maxWriteBytes } = ctx.settings;
    const target = await confine(git.root, path, 'path');
    const file = await readConfined(target, maxWriteBytes);
    if (file.binary)
      throw invalid('INVALID_PATH', 'path', 'path is a binary file; it cannot be edited as text');
    if (file.truncated) {
      throw new WorkspaceError('TOO_LARGE', `path is over ${maxWriteBytes} bytes`, {
        data: { field: 'path' },
      });
    }
    const count = file.content.split(edit.oldText).length - 1;
    if (count === 0) throw invalid('INVALID_PARAMS', 'oldText', 'oldText does not occur in the file');
    if (count > 1 && !edit.replaceAll) {
      throw invalid(
        'INVALID_PARAMS',
        'oldText',
        `oldText occurs ${count} times; give more context or set replaceAll`,
      );
    }
    // A replacement function: `$&` and friends in newText stay literal.
    const next = edit.replaceAll
      ? file.content.split(edit.oldText).join(edit.newText)
      : file.content.replace(edit.oldText, () => edit.newText);
    if (Buffer.byteLength(next) > maxWriteBytes) {
      throw new WorkspaceError('TOO_LARGE', `the edited file would be over ${maxWriteBytes} bytes`, {
        data: { field: 'newText' },
      });
    }
    await writeConfined(target, next);
    await ctx.record(git, 'edit', path, actor);
    return { path, replacements: edit.replaceAll ? count : 1 };
  });
}

export async function deleteFile(
  ctx: WorkspaceContext,
  agentId: string,
  rawPath: string,
  actor: WorkspaceActor,
): Promise<{ path: string; deleted: true }> {
  const path = normalisePath(rawPath, 'path');
  const git = await ctx.ready(agentId, true);
  return ctx.exclusive(git, async () => {
    // The whole path first: a symlink leading out (or nowhere) is refused even though only
    // the link itself would be removed, as every other call refuses it.
    await confine(git.root, path, 'path');
    const directory = posix.dirname(path);
    const parent = await confine(git.root, directory === '.' ? '' : directory, 'path');
    if (!parent.stats?.isDirectory()) throw fileNotFound(path);
    await deleteConfined(parent, posix.basename(path), path);
    await ctx.record(git, 'delete', path, actor);
    return { path, deleted: true as const };
  });
}

/** From commit `sha` when given, else the template for a template file, else HEAD. */
export async function resetFile(
  ctx: WorkspaceContext,
  agentId: string,
  rawPath: string,
  sha: string | undefined,
  actor: WorkspaceActor,
): Promise<{ path: string; source: 'template' | 'commit'; sha?: string }> {
  const path = normalisePath(rawPath, 'path');
  const git = await ctx.ready(agentId, true);
  return ctx.exclusive(git, async () => {
    const target = await confine(git.root, path, 'path');
    const template = WORKSPACE_TEMPLATES.get(path);
    if (sha === undefined && template !== undefined) {
      await writeConfined(target, template);
      await ctx.record(git, 'reset', path, actor);
      return { path, source: 'template' as const };
    }
    if (target.stats?.isDirectory())
      throw invalid('INVALID_PATH', 'path', 'path is a directory; use git.restore');
    const full = await ctx.restoreFrom(git, path, sha);
    await ctx.record(git, 'reset', path, actor);
    return { path, source: 'commit' as const, sha: full };
  });
}
