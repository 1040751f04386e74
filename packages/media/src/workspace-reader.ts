import { constants } from 'node:fs';
import { open, realpath } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { MediaError } from './errors.js';

// Non-blocking so a FIFO in the workspace cannot park a libuv thread waiting for a writer;
// no-follow so a symlink swapped in after the realpath check is refused, not followed.
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW;

/** The whole of a regular file, refused when it is over `maxBytes` (checked before reading). */
async function readRegularFile(
  target: string,
  maxBytes: number,
  refuse: (why: string) => never,
): Promise<Buffer> {
  const handle = await open(target, OPEN_FLAGS).catch(() =>
    refuse('does not name a readable file in the agent workspace'),
  );
  try {
    const info = await handle.stat();
    if (!info.isFile()) refuse('does not name a regular file in the agent workspace');
    if (info.size > maxBytes)
      throw new MediaError('TOO_LARGE', `path is larger than the ${maxBytes}-byte limit`, {
        data: { field: 'path', maxBytes },
      });
    // Read at most one byte past the size seen, so a file growing meanwhile is still bounded.
    const buffer = Buffer.alloc(info.size + 1);
    let filled = 0;
    while (filled < buffer.length) {
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    if (filled > maxBytes)
      throw new MediaError('TOO_LARGE', `path is larger than the ${maxBytes}-byte limit`, {
        data: { field: 'path', maxBytes },
      });
    return buffer.subarray(0, filled);
  } finally {
    await handle.close();
  }
}

/**
 * A `readWorkspaceFile` for {@link createMediaService} over directories `rootOf(agentId)`:
 * a path must be relative and resolve (symlinks followed) inside the agent's root; `..`,
 * absolute paths, symlink escapes, missing files and anything but a regular file (a FIFO, a
 * device, a directory) are refused as `INVALID_INPUT` on `path`, a file over `maxBytes` as
 * `TOO_LARGE` before it is read. The workspace package's own reader can replace it.
 */
export function readConfinedFile(
  rootOf: (agentId: string) => string,
): (agentId: string, path: string, maxBytes?: number) => Promise<Buffer> {
  return async (agentId, path, maxBytes = Number.MAX_SAFE_INTEGER) => {
    const refuse = (why: string): never => {
      throw new MediaError('INVALID_INPUT', `path ${why}`, { data: { field: 'path' } });
    };
    if (isAbsolute(path) || path.includes('\0')) refuse('must be relative to the agent workspace');
    let root: string;
    let target: string;
    try {
      root = await realpath(rootOf(agentId));
      target = await realpath(resolve(root, path));
    } catch {
      return refuse('does not name a file in the agent workspace');
    }
    const inside = relative(root, target);
    if (inside === '' || inside.startsWith(`..${sep}`) || inside === '..' || isAbsolute(inside))
      refuse('resolves outside the agent workspace');
    return readRegularFile(target, maxBytes, refuse);
  };
}
