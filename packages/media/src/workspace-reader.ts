import { readFile, realpath } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { MediaError } from './errors.js';

/**
 * A `readWorkspaceFile` for {@link createMediaService} over directories `rootOf(agentId)`:
 * a path must be relative and resolve (symlinks followed) inside the agent's root; `..`,
 * absolute paths and symlink escapes are refused as `INVALID_INPUT` on `path`, a missing
 * file likewise. The workspace package's own reader can replace it once it exists.
 */
export function readConfinedFile(
  rootOf: (agentId: string) => string,
): (agentId: string, path: string) => Promise<Buffer> {
  return async (agentId, path) => {
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
    try {
      return await readFile(target);
    } catch {
      return refuse('does not name a readable file in the agent workspace');
    }
  };
}
