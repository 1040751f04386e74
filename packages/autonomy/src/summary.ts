import type { AutonomyRunSummary } from '@agentd/contracts';
import type { Database } from '@agentd/storage';

/** Severity order of `worstRootRunId`: the contract's orphaned, denial breaker, killed, revoked. */
const SEVERITY = ['orphaned', 'denial_breaker', 'killed', 'revoked'] as const;

const round = (value: number, places: number) => Math.round(value * 10 ** places) / 10 ** places;

/**
 * The fleet report's autonomy figures for a window: run counts, orphaned, revoked and cost from
 * the durable run table (runs started in the window); resumed, killed, denial-breaker trips and
 * budget breaches from the health signals recorded as they happened. Undefined when the run
 * table does not exist (the durable store is not wired).
 */
export async function summarizeAutonomy(
  db: Database,
  window: { sinceMs: number; untilMs?: number | undefined },
): Promise<AutonomyRunSummary | undefined> {
  const table = await db.get(
    db.dialect === 'pg'
      ? "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'autonomy_runs'"
      : "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'autonomy_runs'",
  );
  if (!table) return undefined;
  const untilMs = window.untilMs ?? Number.MAX_SAFE_INTEGER;
  const runs = await db.get<{ total: number; orphaned: number; revoked: number; cost: number }>(
    `SELECT count(*) AS total,
       coalesce(sum(CASE WHEN status = 'orphaned' THEN 1 ELSE 0 END), 0) AS orphaned,
       coalesce(sum(revoked), 0) AS revoked,
       coalesce(sum(cost_usd), 0) AS cost
     FROM autonomy_runs WHERE started_at >= ? AND started_at < ?`,
    [window.sinceMs, untilMs],
  );
  const signals = new Map<string, number>();
  for (const row of await db.query<{ signal: string; n: number }>(
    'SELECT signal, sum(count) AS n FROM autonomy_signals WHERE ts >= ? AND ts < ? GROUP BY signal',
    [window.sinceMs, untilMs],
  )) {
    signals.set(String(row.signal), Number(row.n));
  }
  const total = Number(runs?.total ?? 0);
  const orphaned = Number(runs?.orphaned ?? 0);
  const revoked = Number(runs?.revoked ?? 0);
  const degraded = orphaned + revoked;
  const worst = await worstRoot(db, window.sinceMs, untilMs);
  return {
    runs: { total, degraded, degradedRate: total === 0 ? 0 : round(degraded / total, 4) },
    orphaned,
    resumed: signals.get('resumed') ?? 0,
    revoked,
    killed: signals.get('killed') ?? 0,
    denialBreakerTrips: signals.get('denial_breaker') ?? 0,
    budgetBreaches: signals.get('budget_breach') ?? 0,
    costUsd: round(Number(runs?.cost ?? 0), 6),
    ...(worst !== undefined ? { worstRootRunId: worst } : {}),
  };
}

/** The root of the most severe degraded run of the window; newest first within a severity. */
async function worstRoot(db: Database, sinceMs: number, untilMs: number): Promise<string | undefined> {
  for (const severity of SEVERITY) {
    const row =
      severity === 'revoked'
        ? await db.get<{ root: string }>(
            `SELECT root_run_id AS root FROM autonomy_runs WHERE revoked = 1 AND started_at >= ? AND started_at < ?
             ORDER BY started_at DESC, root_run_id LIMIT 1`,
            [sinceMs, untilMs],
          )
        : await db.get<{ root: string }>(
            `SELECT root_run_id AS root FROM autonomy_signals WHERE signal = ? AND ts >= ? AND ts < ?
             ORDER BY ts DESC, root_run_id LIMIT 1`,
            [severity, sinceMs, untilMs],
          );
    if (row) return String(row.root);
  }
  return undefined;
}
