import type { AutonomyRunSummary } from '@agentd/contracts';
import type { EvidenceRolls } from '@agentd/evidence';
import type { Database } from '@agentd/storage';
import { ObsReportsError } from '../errors.js';
import type { ObsEvidence } from '../evidence-store.js';
import type { FleetCronWakeGate } from '../fleet-report.js';

/** What every obs report reads from: the options of `createObsService`, defaults applied. */
export interface ObsServiceContext {
  db: Database;
  dataDir: string;
  evidence: ObsEvidence;
  rolls: EvidenceRolls | undefined;
  now: () => number;
  cronWakeGate:
    | ((window: { sinceMs: number; untilMs: number }) => Promise<FleetCronWakeGate | undefined>)
    | undefined;
  autonomy:
    | ((window: { sinceMs: number; untilMs: number }) => Promise<AutonomyRunSummary | undefined>)
    | undefined;
}

/** The `INVALID_PARAMS` error of one parameter. */
export function invalidParams(path: string, message: string): ObsReportsError {
  return new ObsReportsError('INVALID_PARAMS', `${path}: ${message}`, {
    data: { issues: [{ path: [path], message }] },
  });
}

/** Whether the shared database holds `name` (tables of other packages may be absent). */
export async function tableExists(db: Database, name: string): Promise<boolean> {
  const sql =
    db.dialect === 'pg'
      ? 'SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ?'
      : "SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?";
  return (await db.get(sql, [name])) !== undefined;
}
