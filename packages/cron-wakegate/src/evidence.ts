import type { CronWakeGateBlock, WakeGateFireCounts } from '@agentd/contracts';
import type { Queryable } from '@agentd/storage';

/** The block's types are declared in @agentd/contracts, which @agentd/obs-reports reads them from too. */
export type { CronWakeGateBlock, WakeGateFireCounts };

const rate = (part: number, whole: number) =>
  whole === 0 ? 0 : Math.round((part / whole) * 10_000) / 10_000;

/**
 * Computes the `cronWakeGate` block from `cron_runs` for fires with `sinceMs <= ts < untilMs`.
 * Only gated fires count (`gated = 1`); a fire that failed open is one whose gate crashed,
 * timed out, exceeded its caps or printed invalid output. Returns `undefined` when no gated
 * fire ran in the window, as the contract asks for the block to be absent then.
 */
export async function summarizeWakeGateFires(
  db: Queryable,
  window: { sinceMs: number; untilMs?: number | undefined },
): Promise<CronWakeGateBlock | undefined> {
  const rows = await db.query<{
    agent_id: string;
    fires: number;
    skipped: number;
    failed_open: number;
    turns_saved: number;
    tool_calls: number;
  }>(
    `SELECT agent_id,
            COUNT(*) AS fires,
            SUM(CASE WHEN gate_outcome = 'skip' THEN 1 ELSE 0 END) AS skipped,
            SUM(CASE WHEN gate_outcome = 'failed-open' THEN 1 ELSE 0 END) AS failed_open,
            SUM(COALESCE(est_turns_saved, 0)) AS turns_saved,
            SUM(COALESCE(tool_calls, 0)) AS tool_calls
       FROM cron_runs
      WHERE gated = 1 AND ts >= ? AND ts < ?
      GROUP BY agent_id
      ORDER BY agent_id`,
    [window.sinceMs, window.untilMs ?? Number.MAX_SAFE_INTEGER],
  );
  if (rows.length === 0) return undefined;
  const perAgent = rows.map((row) => ({
    agentId: row.agent_id,
    fires: row.fires,
    skipped: row.skipped,
    skipRate: rate(row.skipped, row.fires),
    failedOpen: row.failed_open,
    failOpenRate: rate(row.failed_open, row.fires),
    turnsSaved: row.turns_saved,
    toolCalls: row.tool_calls,
  }));
  const sum = (pick: (row: WakeGateFireCounts) => number) =>
    perAgent.reduce((total, row) => total + pick(row), 0);
  const total = sum((row) => row.fires);
  const skipped = sum((row) => row.skipped);
  const failedOpen = sum((row) => row.failedOpen);
  return {
    fires: {
      total,
      skipped,
      skipRate: rate(skipped, total),
      failedOpen,
      failOpenRate: rate(failedOpen, total),
    },
    turnsSaved: sum((row) => row.turnsSaved),
    toolCalls: sum((row) => row.toolCalls),
    perAgent,
  };
}
