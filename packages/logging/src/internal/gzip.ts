import { createReadStream, createWriteStream } from 'node:fs';
import { rename, stat, unlink, utimes } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';

/**
 * Gzips `source` into `target` and removes `source`. The data goes to a `.tmp`
 * name first and is renamed into place, so a crash never leaves a truncated
 * `target`; `target` keeps the source's modification time so age-based sweeps
 * still see when the data was written.
 */
export async function gzipFile(source: string, target: string): Promise<void> {
  const info = await stat(source);
  const temporary = `${target}.tmp`;
  try {
    await pipeline(createReadStream(source), createGzip(), createWriteStream(temporary));
    await utimes(temporary, info.atime, info.mtime);
    await rename(temporary, target);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
  await unlink(source);
}

/** Whether an fs error means the file is simply not there. */
export function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}
