import { constants } from 'node:fs';
import { type FileHandle, open, realpath } from 'node:fs/promises';
import { isAbsolute, relative, sep } from 'node:path';

/** Whether `target` (a real path) lies inside `realRoot` (itself included). */
export function isInside(realRoot: string, target: string): boolean {
  const inside = relative(realRoot, target);
  return !(inside === '..' || inside.startsWith(`..${sep}`) || isAbsolute(inside));
}

/** The path through which an open handle's file or directory is read again (Linux). */
export function handlePath(handle: FileHandle): string {
  return `/proc/self/fd/${handle.fd}`;
}

/**
 * Opens `host` (a path already confined) without following a symlink at its end, then checks
 * that what was opened still lies inside `realRoot`. The jailed script can write the
 * workspace while a builtin runs, so a path checked a moment ago may since have become a
 * symlink out of it; the check on the open handle is what holds. Answers undefined when the
 * path cannot be opened that way or led outside.
 */
export async function openInside(
  realRoot: string,
  host: string,
  kind: 'file' | 'dir',
): Promise<FileHandle | undefined> {
  const flags = constants.O_RDONLY | constants.O_NOFOLLOW | (kind === 'dir' ? constants.O_DIRECTORY : 0);
  let handle: FileHandle;
  try {
    handle = await open(host, flags);
  } catch {
    return undefined;
  }
  try {
    if (isInside(realRoot, await realpath(handlePath(handle)))) return handle;
  } catch {
    // Fall through: an unreadable fd link is refused like an outside one.
  }
  await handle.close();
  return undefined;
}
