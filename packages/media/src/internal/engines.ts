import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { delimiter, join } from 'node:path';

/** The model directory pocketsphinx-en-us installs, which pocketsphinx_continuous uses by default. */
export const POCKETSPHINX_MODEL = '/usr/share/pocketsphinx/model/en-us/en-us';

/** True when `path` exists and is executable (or readable, for a model file). */
async function usable(path: string, mode = constants.X_OK): Promise<boolean> {
  try {
    await access(path, mode);
    return true;
  } catch {
    return false;
  }
}

/** True when `command` (a path, or a name looked up in `PATH`) can be run. */
export async function commandExists(command: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  if (command.includes('/')) return usable(command);
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir && (await usable(join(dir, command)))) return true;
  }
  return false;
}

/** True when a file or directory can be read. */
export function readable(path: string): Promise<boolean> {
  return usable(path, constants.R_OK);
}
