import type { Database, Dialect } from '@agentd/storage';
import { createObsEvidence, type ObsEvidence, type ObsEvidenceOptions } from '../src/evidence-store.js';
import { openDialectDatabase } from './dialects.js';

/** The database and the evidence store a test works on. */
export interface OpenedEvidence {
  db: Database;
  evidence: ObsEvidence;
}

/**
 * A database in `dataDir` (or on PostgreSQL, one per directory) and the evidence store over it,
 * migrated: where every store test starts.
 */
export async function openObsEvidence(
  dataDir: string,
  options: Omit<ObsEvidenceOptions, 'db'> = {},
  dialect: Dialect = 'libsql',
): Promise<OpenedEvidence> {
  const db = await openDialectDatabase(dialect, dataDir);
  const evidence = createObsEvidence({ db, ...options });
  await evidence.start();
  return { db, evidence };
}

/** Closes what {@link openObsEvidence} opened, the store first (closing it flushes into the database). */
export async function closeObsEvidence({ db, evidence }: OpenedEvidence): Promise<void> {
  await evidence.close();
  await db.close();
}
