import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { TerminalError } from '../errors.js';

async function executable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/**
 * The executable a drive runs: a path (relative ones from the drive's directory) or a name
 * looked up on the drive's PATH. Checked before spawning, so a typo answers "not found"
 * instead of a drive whose screen says `execvp(3) failed`.
 */
export async function resolveCommand(
  command: string,
  cwd: string,
  path: string | undefined,
): Promise<string> {
  if (command.includes('\0')) {
    throw new TerminalError('INVALID_PARAMS', 'command contains a NUL character', {
      data: { field: 'command' },
    });
  }
  if (command.includes('/')) {
    const file = isAbsolute(command) ? command : resolve(cwd, command);
    if (await executable(file)) return file;
  } else {
    for (const directory of (path ?? '').split(delimiter)) {
      if (directory === '') continue;
      const file = join(directory, command);
      if (await executable(file)) return file;
    }
  }
  throw new TerminalError('SPAWN_FAILED', `Command not found or not executable: ${command.slice(0, 200)}`, {
    data: { field: 'command' },
  });
}
