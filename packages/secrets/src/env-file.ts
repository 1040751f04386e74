import {
  closeSync,
  fsyncSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { SecretsError } from './errors.js';
import { ensurePrivateFile } from './internal/private-file.js';
import { SECRET_LIST_DEFAULT, matchesFilter, secretNameSchema, secretValueSchema } from './names.js';

/** Name of the fallback file inside the data directory. */
export const ENV_FILE = '.env';

/** The plain-text fallback used when no master key is configured: `<dataDir>/.env`, mode 0600. */
export interface EnvFile {
  /** Path of the file. */
  readonly path: string;
  /** Writes `name=value` (replacing an older line) atomically: a crash leaves the old file or the new one. */
  set(name: string, value: string): Promise<{ created: boolean }>;
  /** The value of `name`, or `undefined`. */
  get(name: string): string | undefined;
  /** Names in the file, sorted, matching the glob `filter`. */
  list(options?: { filter?: string | undefined; limit?: number | undefined }): string[];
}

/**
 * A line is `NAME=value`; values this package writes are JSON strings (so new lines, quotes and
 * `#` survive), and an unquoted hand-written value is taken as it is. Blank lines and `#`
 * comments are skipped.
 */
function parse(text: string): Map<string, string> {
  const values = new Map<string, string>();
  for (const line of text.split('\n')) {
    const match = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=(.*)$/.exec(line);
    if (!match) continue;
    const [, name = '', raw = ''] = match;
    const value = raw.trim();
    if (value.startsWith('"')) {
      try {
        values.set(name, JSON.parse(value) as string);
      } catch {
        // A hand-edited line that is not a JSON string is read as written.
        values.set(name, value);
      }
    } else {
      values.set(name, value);
    }
  }
  return values;
}

function format(values: Map<string, string>): string {
  const lines = ['# Written by agentd (no master key is configured). Owner-only; values are plain text.'];
  for (const [name, value] of values) lines.push(`${name}=${JSON.stringify(value)}`);
  return `${lines.join('\n')}\n`;
}

/** Opens the env-file fallback at `<dataDir>/.env`; nothing is written until the first `set`. */
export function openEnvFile(options: { dataDir: string }): EnvFile {
  const path = join(options.dataDir, ENV_FILE);
  // Re-read only when the file changed: another process (the CLI) may write it.
  let cache: { stamp: string; values: Map<string, string> } | undefined;
  const read = (): Map<string, string> => {
    const stat = statSync(path, { throwIfNoEntry: false });
    if (!stat) return new Map();
    const stamp = `${stat.mtimeMs}:${stat.size}:${stat.ino}`;
    if (cache?.stamp !== stamp) cache = { stamp, values: parse(readFileSync(path, 'utf8')) };
    return cache.values;
  };
  let writing: Promise<unknown> = Promise.resolve();

  return {
    path,
    async set(name, value) {
      const checkedName = secretNameSchema.safeParse(name);
      if (!checkedName.success) {
        throw new SecretsError(
          'INVALID_NAME',
          `Invalid secret name: ${checkedName.error.issues[0]?.message}`,
        );
      }
      const checkedValue = secretValueSchema.safeParse(value);
      if (!checkedValue.success) {
        throw new SecretsError(
          'INVALID_VALUE',
          `Invalid value for ${name}: ${checkedValue.error.issues[0]?.message}`,
        );
      }
      // Writes of this process queue, so two sets never lose one another's line.
      const done = writing.then(() => {
        const values = new Map(read());
        const created = !values.has(name);
        values.set(name, value);
        writeAtomically(options.dataDir, path, format(values));
        return { created };
      });
      writing = done.catch(() => undefined);
      return done;
    },
    get(name) {
      const values = read();
      return values.has(name) ? values.get(name) : undefined;
    },
    list(listOptions = {}) {
      const names = [...read().keys()].sort();
      const filter = listOptions.filter;
      const matching = filter === undefined ? names : names.filter((name) => matchesFilter(name, filter));
      return matching.slice(0, listOptions.limit ?? SECRET_LIST_DEFAULT);
    },
  };
}

/** Writes a private temp file beside `path`, syncs it and renames it over `path`. */
function writeAtomically(dir: string, path: string, text: string): void {
  const temp = join(dir, `.env.${randomBytes(6).toString('hex')}.tmp`);
  ensurePrivateFile(dir, temp);
  try {
    const fd = openSync(temp, 'w', 0o600);
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
  syncDir(dir);
}

/** Makes the rename durable; some file systems refuse to sync a directory, which is fine. */
function syncDir(dir: string): void {
  try {
    const fd = openSync(dir, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Best effort: the rename itself is atomic either way.
  }
}
