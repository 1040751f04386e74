import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';

/** What the lock file records of one imported skill. */
export const importRecordSchema = z.object({
  name: z.string(),
  registry: z.string(),
  trust: z.string(),
  version: z.string(),
  /** `sha256:<hex>` of the fetched archive, pinned on first import. */
  hash: z.string(),
  requiredTools: z.array(z.string()),
  importedAt: z.number(),
  files: z.number(),
});

/** One imported skill's record. */
export type ImportRecord = z.infer<typeof importRecordSchema>;

const lockSchema = z.object({ version: z.literal(1), skills: z.array(importRecordSchema) });

/** Reads the lock file; a missing file is an empty lock. */
export async function readLock(path: string): Promise<Map<string, ImportRecord>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
    throw error;
  }
  const parsed = lockSchema.parse(JSON.parse(text));
  return new Map(parsed.skills.map((record) => [record.name, record]));
}

/** Writes the lock file atomically (temp file, rename), private to the daemon's user. */
export async function writeLock(path: string, records: Map<string, ImportRecord>): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  const skills = [...records.values()].sort((a, b) => a.name.localeCompare(b.name));
  await writeFile(temp, `${JSON.stringify({ version: 1, skills }, null, 2)}\n`, { mode: 0o600 });
  await rename(temp, path);
}
