import type { Database } from '@agentd/storage';
import type { ProcedureState } from './internal/store.js';

/** What one sweep did: when, its result and its counts (stored and answered alike). */
export interface SweepCounts {
  at: number;
  result: string;
  scanned: number;
  promoted: number;
  demoted: number;
  evicted: number;
}

/** `learning.status`. */
export interface LearningStatus {
  agentId?: string;
  procedures: Record<ProcedureState, number>;
  outcomes: Record<'success' | 'failure' | 'corrected' | 'unknown', number>;
  memory: { tracked: number; demoted: number };
  lastSweep: (SweepCounts & { admissionOutcome: string | null; synthesisAbstained: boolean }) | null;
}

/** `learning.status` of one agent, or of all: counts by state, outcomes, memories and the last sweep. */
export async function readStatus(
  db: Pick<Database, 'query' | 'get'>,
  agentId?: string,
): Promise<LearningStatus> {
  const filter = [agentId ?? null, agentId ?? null];
  const count = async (sql: string) =>
    new Map((await db.query<{ k: string; n: number }>(sql, filter)).map((row) => [row.k, row.n]));
  const states = await count(
    'SELECT state AS k, COUNT(*) AS n FROM learning_procedures WHERE (CAST(? AS TEXT) IS NULL OR agent_id = ?) GROUP BY state',
  );
  const outcomes = await count(
    'SELECT outcome AS k, COUNT(*) AS n FROM learning_outcomes WHERE (CAST(? AS TEXT) IS NULL OR agent_id = ?) GROUP BY outcome',
  );
  const memory = await count(
    'SELECT state AS k, COUNT(*) AS n FROM learning_memory_stats WHERE (CAST(? AS TEXT) IS NULL OR agent_id = ?) GROUP BY state',
  );
  const last = await db.get<SweepCounts & { admission_outcome: string | null; synthesis_abstained: number }>(
    'SELECT * FROM learning_sweeps WHERE (CAST(? AS TEXT) IS NULL OR agent_id = ?) ORDER BY id DESC LIMIT 1',
    filter,
  );
  return {
    ...(agentId ? { agentId } : {}),
    procedures: {
      candidate: states.get('candidate') ?? 0,
      active: states.get('active') ?? 0,
      stale: states.get('stale') ?? 0,
      archived: states.get('archived') ?? 0,
    },
    outcomes: {
      success: outcomes.get('success') ?? 0,
      failure: outcomes.get('failure') ?? 0,
      corrected: outcomes.get('corrected') ?? 0,
      unknown: outcomes.get('unknown') ?? 0,
    },
    memory: {
      tracked: [...memory.values()].reduce((sum, n) => sum + n, 0),
      demoted: memory.get('demoted') ?? 0,
    },
    lastSweep: last
      ? {
          at: last.at,
          result: last.result,
          scanned: last.scanned,
          promoted: last.promoted,
          demoted: last.demoted,
          evicted: last.evicted,
          admissionOutcome: last.admission_outcome,
          synthesisAbstained: last.synthesis_abstained === 1,
        }
      : null,
  };
}
