import {
  listTrajectoryFiles,
  readSessionIndex,
  readTrajectory,
  type TrajectoryRecord,
} from '@agentd/evidence';
import { buildFleetHealthReport, FLEET_CATEGORIES, type FleetHealthReport } from '../fleet-report.js';
import { type ObsServiceContext, tableExists } from './service-context.js';

const HOUR_MS = 3_600_000;
/** Trajectory files read at once by `obs.fleet.health` (reads wait on the fs thread pool). */
const TRAJECTORY_READS_IN_FLIGHT = 16;

/** `run` over `items` with at most `limit` in flight; results in the order of `items`. */
async function mapLimit<T, R>(items: T[], limit: number, run: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const at = next++;
      results[at] = await run(items[at] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** `obs.fleet.health` over the last `windowHours`: the window's evidence gathered and reported. */
export async function fleetHealthOf(
  context: ObsServiceContext,
  windowHours: number,
): Promise<FleetHealthReport> {
  const { db, dataDir, rolls, evidence } = context;
  const untilMs = context.now() + 1;
  const sinceMs = Math.max(0, Math.floor(untilMs - windowHours * HOUR_MS));
  const read = await readSessionIndex(dataDir, { sinceMs, untilMs }, { rolls });
  const index = read.records.filter((record) => !record.synthetic);
  // Per-tool counts come from the trajectories of the sessions that made tool calls.
  const withTools = [
    ...new Set(
      index
        .filter((record) => record.toolCalls.ok + record.toolCalls.failed > 0)
        .map((record) => record.sessionKey),
    ),
  ].sort();
  const toolCalls: Array<Extract<TrajectoryRecord, { type: 'tool_call' }>> = [];
  const listing = await listTrajectoryFiles(dataDir);
  const trajectories = await mapLimit(withTools, TRAJECTORY_READS_IN_FLIGHT, (sessionKey) =>
    readTrajectory(dataDir, sessionKey, { listing, rolls }),
  );
  for (const trajectory of trajectories) {
    for (const record of trajectory.records) {
      if (record.type === 'tool_call' && record.ts >= sinceMs && record.ts < untilMs) toolCalls.push(record);
    }
  }
  const diagnostics = await evidence.diagnosticsIn({ sinceMs, untilMs, categories: FLEET_CATEGORIES });
  const summaryStore = (await tableExists(db, 'agent_sessions'))
    ? await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM agent_sessions WHERE updated_at >= ?', [sinceMs])
    : undefined;
  return buildFleetHealthReport({
    windowHours,
    index,
    toolCalls,
    diagnostics,
    cronWakeGate: context.cronWakeGate ? await context.cronWakeGate({ sinceMs, untilMs }) : undefined,
    autonomy: context.autonomy ? await context.autonomy({ sinceMs, untilMs }) : undefined,
    coverage: {
      sessionSummaryStore: { found: summaryStore !== undefined, rows: summaryStore?.n ?? 0 },
      sessionIndex: { daysRead: read.daysRead, daysMissing: read.daysMissing },
      billing: { present: await tableExists(db, 'agent_billing') },
    },
  });
}
