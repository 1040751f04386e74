import { access, rename, unlink } from 'node:fs/promises';
import { gzipFile, isMissing } from './internal/gzip.js';

/** Options of {@link rollFile}. */
export interface RollFileOptions {
  /** Rolled parts kept (`.1` newest … `.maxFiles` oldest); 0 keeps none. */
  maxFiles: number;
  /** Gzip the new `.1` into `<filePath>.1.gz`. @default false */
  compress?: boolean;
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

/**
 * Rolls one file: the parts `<filePath>.<n>` (plain or `.gz`) move up to `.<n+1>`, the part at
 * `maxFiles` is deleted, and `source` (the live file, or a copy renamed aside) becomes
 * `<filePath>.1` (`.1.gz` with `compress`), or is deleted when `maxFiles` is 0. Returns the new
 * part's path, `undefined` when none was kept.
 *
 * Only the parts that exist move (numbered 1..top without gaps; the start-up sweeps close
 * gaps a crash left), so a roll costs a few renames whatever `maxFiles` is. A part's number
 * is never reused while it still exists, so the renames never overwrite one another.
 * @throws the fs error of a rename or delete that failed for another reason than a missing file.
 */
export async function rollFile(
  source: string,
  filePath: string,
  options: RollFileOptions,
): Promise<string | undefined> {
  const { maxFiles } = options;
  const present = (n: number) =>
    Promise.all([exists(`${filePath}.${n}`), exists(`${filePath}.${n}.gz`)]).then(
      ([plain, packed]) => plain || packed,
    );
  let top = 0;
  while (top < maxFiles && (await present(top + 1))) top++;
  for (let n = top; n >= 1; n--) {
    for (const suffix of ['', '.gz']) {
      const from = `${filePath}.${n}${suffix}`;
      try {
        if (n === maxFiles) await unlink(from);
        else await rename(from, `${filePath}.${n + 1}${suffix}`);
      } catch (error) {
        if (!isMissing(error)) throw error;
      }
    }
  }
  if (maxFiles === 0) {
    await unlink(source);
    return undefined;
  }
  if (options.compress) {
    await gzipFile(source, `${filePath}.1.gz`);
    return `${filePath}.1.gz`;
  }
  await rename(source, `${filePath}.1`);
  return `${filePath}.1`;
}
