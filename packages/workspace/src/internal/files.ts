import { randomBytes } from 'node:crypto';
import { lstat, mkdir, open, readdir, rename, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { invalid } from '../errors.js';
import { type Confined, checkOpened, fileNotFound, READ_FLAGS } from './paths.js';

/** A file as a read answers it. */
export interface FileContent {
  path: string;
  /** UTF-8 text; empty for a binary file. */
  content: string;
  /** True when the file is longer than what was read. */
  truncated: boolean;
  /** True when the file holds a NUL byte or is not valid UTF-8: its bytes are not returned. */
  binary: boolean;
  /** Size of the whole file in bytes. */
  size: number;
}

/** Git's own heuristic: a NUL byte in the first 8000 bytes makes a file binary. */
const BINARY_SNIFF_BYTES = 8000;

/** Reads at most `maxBytes` of a confined regular file, without following a swapped-in symlink. */
export async function readConfined(target: Confined, maxBytes: number, field = 'path'): Promise<FileContent> {
  if (!target.stats) throw fileNotFound(target.path);
  if (target.stats.isDirectory()) throw invalid('INVALID_PATH', field, `${field} is a directory`);
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(target.absolute, READ_FLAGS);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw fileNotFound(target.path);
    if (code === 'ELOOP') throw invalid('INVALID_PATH', field, `${field} became a symlink`);
    throw error;
  }
  try {
    const stats = await handle.stat();
    checkOpened(stats, field);
    const length = Math.min(stats.size, maxBytes);
    const buffer = Buffer.alloc(length);
    let filled = 0;
    while (filled < length) {
      const { bytesRead } = await handle.read(buffer, filled, length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    const bytes = buffer.subarray(0, filled);
    const truncated = stats.size > filled;
    const text = decodeText(bytes, truncated);
    return {
      path: target.path,
      content: text ?? '',
      truncated,
      binary: text === undefined,
      size: stats.size,
    };
  } finally {
    await handle.close();
  }
}

/** UTF-8 text of `bytes`, or `undefined` when they look binary. A cut multi-byte character at the end of a truncated read is dropped. */
export function decodeText(bytes: Uint8Array, truncated: boolean): string | undefined {
  if (bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: truncated });
  } catch {
    return undefined;
  }
}

/**
 * Writes `content` at a confined path atomically (a temporary file beside it, then a rename),
 * creating missing directories owner-only. Answers whether the file is new.
 */
export async function writeConfined(
  target: Confined,
  content: string | Uint8Array,
  field = 'path',
): Promise<boolean> {
  if (target.stats?.isDirectory()) throw invalid('INVALID_PATH', field, `${field} is a directory`);
  if (target.stats && !target.stats.isFile())
    throw invalid('INVALID_PATH', field, `${field} is not a regular file`);
  const directory = dirname(target.absolute);
  await mkdir(directory, { recursive: true, mode: 0o700 });
  const temporary = join(
    directory,
    `.${basename(target.absolute)}.${randomBytes(6).toString('hex')}.agentd-tmp`,
  );
  try {
    await writeFile(temporary, content, { mode: 0o600, flag: 'wx' });
    await rename(temporary, target.absolute);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    if ((error as NodeJS.ErrnoException).code === 'ENOTDIR') {
      throw invalid('INVALID_PATH', field, `${field} goes through a file as if it were a directory`);
    }
    throw error;
  }
  return target.stats === undefined;
}

/**
 * Removes a file or a symlink (the link itself, never its target) whose parent directory was
 * confined. A directory is refused.
 */
export async function deleteConfined(
  parent: Confined,
  name: string,
  path: string,
  field = 'path',
): Promise<void> {
  const absolute = join(parent.absolute, name);
  const stats = await lstat(absolute).catch(() => undefined);
  if (!stats) throw fileNotFound(path);
  if (stats.isDirectory()) throw invalid('INVALID_PATH', field, `${field} is a directory`);
  if (stats.isFile() && stats.nlink > 1) {
    throw invalid(
      'INVALID_PATH',
      field,
      `${field} is a hard link; its other names may be outside the workspace`,
    );
  }
  await unlink(absolute);
}

/** One entry of a directory listing. */
export interface DirEntry {
  name: string;
  type: 'file' | 'directory' | 'symlink' | 'other';
  /** Bytes, for files. */
  size?: number;
}

/** Entries of a confined directory, sorted by name, at most `max`; `.git` at the root is hidden. */
export async function listConfined(
  target: Confined,
  max: number,
  atRoot: boolean,
  field = 'path',
): Promise<{ path: string; entries: DirEntry[]; truncated: boolean }> {
  if (!target.stats) throw fileNotFound(target.path);
  if (!target.stats.isDirectory()) throw invalid('INVALID_PATH', field, `${field} is not a directory`);
  const names = (await readdir(target.absolute, { withFileTypes: true }))
    .filter((entry) => !(atRoot && entry.name === '.git'))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const entries: DirEntry[] = [];
  for (const entry of names.slice(0, max)) {
    if (entry.isFile()) {
      const stats = await lstat(join(target.absolute, entry.name)).catch(() => undefined);
      entries.push({ name: entry.name, type: 'file', ...(stats ? { size: stats.size } : {}) });
    } else if (entry.isDirectory()) entries.push({ name: entry.name, type: 'directory' });
    else if (entry.isSymbolicLink()) entries.push({ name: entry.name, type: 'symlink' });
    else entries.push({ name: entry.name, type: 'other' });
  }
  return { path: target.path, entries, truncated: names.length > max };
}
