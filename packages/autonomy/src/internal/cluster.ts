import type { Queryable } from '@agentd/storage';
import { type RunOwner, toRecord } from '../run-store.js';
import type { AutonomyContext, ClusterRuns } from './context.js';
import { stopRuns } from './execute.js';

/** The bus topic of run control in a cluster: a stop, a steer or a revocation to pick up. */
export const TOPIC = 'autonomy';

/** The owner a fenced end of `runId` carries here, in cluster mode. */
export function ownerOf(ctx: AutonomyContext, runId: string): RunOwner | undefined {
  const fence = ctx.cluster?.fences.get(runId);
  return ctx.cluster === undefined || fence === undefined
    ? undefined
    : { instanceId: ctx.cluster.coordinator.instanceId, fence };
}

/** Runs `write` in a transaction that also publishes the control notice (sent at commit). */
export function withNotice<T>(cluster: ClusterRuns, write: (tx: Queryable) => Promise<T>): Promise<T> {
  return cluster.db.transaction(async (tx) => {
    const result = await write(tx);
    await cluster.coordinator.bus.publish(TOPIC, {}, tx);
    return result;
  });
}

/**
 * The owner's side of run control, run on every notice and poll: stops asked on other
 * instances end the runs here, steered messages join their runs' queues (taken at the next
 * step boundary), and revocations mark the runs so the gate refuses their next tool call.
 */
export async function pickUpControl(ctx: AutonomyContext): Promise<void> {
  const ids = [...ctx.active.keys()];
  if (ids.length === 0) return;
  for (const request of await ctx.store.stopRequests(ids)) {
    const run = ctx.active.get(request.runId);
    if (run === undefined) continue;
    if (request.revoked) run.record.revoked = true;
    if (request.reason !== undefined) await stopRuns(ctx, [run], request.reason, request.detail);
  }
  for (const steer of await ctx.store.takeSteers(ids))
    ctx.active.get(steer.runId)?.steerQueue.push(steer.message);
}

/**
 * Keeps this instance's runs: renews each lease at its fence; a run whose lease was lost (the
 * instance was paused past it and another took the run over) stops here without writing an end.
 */
export async function renewOwned(ctx: AutonomyContext, cluster: ClusterRuns): Promise<void> {
  for (const [runId, fence] of [...cluster.fences]) {
    const run = ctx.active.get(runId);
    if (run === undefined) {
      cluster.fences.delete(runId);
      continue;
    }
    if (await cluster.rows.renew(runId, fence)) continue;
    cluster.fences.delete(runId);
    ctx.active.delete(runId);
    ctx.bySession.delete(run.record.sessionKey);
    run.controller.abort('shutdown');
    ctx.logger.warn(
      {
        runId,
        hint: 'this instance lost the run lease (paused or cut off from the database); another instance took it over',
        errorKind: 'dependency',
      },
      'sub-agent run lease lost',
    );
  }
}

/** Claims running runs nobody holds (their owner is gone): each with its stop request, if any. */
export async function claimOrphans(
  cluster: ClusterRuns,
): Promise<
  Array<{ record: ReturnType<typeof toRecord>; stop: string | undefined; detail: string | undefined }>
> {
  const claimed = await cluster.rows.claim({
    where: "status = 'running'",
    orderBy: 'started_at',
    limit: 100,
  });
  return claimed.map((claim) => {
    const row = claim.row as Record<string, unknown>;
    cluster.fences.set(String(claim.id), claim.fence);
    return {
      record: toRecord(row),
      stop: row.stop_reason === null ? undefined : String(row.stop_reason),
      detail: row.stop_detail === null ? undefined : String(row.stop_detail),
    };
  });
}
