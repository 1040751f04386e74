import { GRAPH_TOPIC } from '../cluster.js';
import type { GraphQueryable } from '../database.js';
import type { RunStatus } from '../execute.js';
import type { GraphService } from '../service.js';
import { type ClusterRuns, type GraphContext, loadRun } from './graph-context.js';
import type { RunRow } from './schema.js';

// Cluster mode (PostgreSQL): a run is an owned row of `graph_runs`. The instance executing it
// holds it at a fence under a lease it renews; every write it makes about the run is fenced, so
// once another instance has taken the run over (the lease ran out: the owner died or was
// paused), the old owner's writes are refused and it stops the run here.

/** How many runs one takeover round claims at most. */
const CLAIM_BATCH = 16;

/** The PostgreSQL clock in epoch ms: leases are measured against the database, never a host. */
export const PG_NOW_MS = '(extract(epoch from now()) * 1000)::bigint';

/**
 * Runs `write` in a transaction that first locks the run row at this instance's fence (a
 * takeover's claim waits for it; after one, the fence no longer matches and nothing is
 * written). The writes of one run commit in the order they were made. False when the run is
 * no longer this instance's.
 */
export function fencedWrite(
  ctx: GraphContext,
  cluster: ClusterRuns,
  runId: string,
  write: (tx: GraphQueryable) => Promise<void>,
): Promise<boolean> {
  const fence = cluster.fences.get(runId);
  if (fence === undefined) return Promise.resolve(false);
  const previous = cluster.tails.get(runId) ?? Promise.resolve(true);
  const next = previous.then(() =>
    ctx.db.transaction(async (tx) => {
      // A no-op SET that takes the row lock, and matches only at this owner and fence.
      if (!(await cluster.rows.write(runId, fence, { set: 'lease_until = lease_until' }, tx))) return false;
      await write(tx);
      return true;
    }),
  );
  cluster.tails.set(
    runId,
    next.catch(() => false),
  );
  return next;
}

/** Stops a run this instance lost to another (no further writes; the new owner carries on). */
export function loseRun(ctx: GraphContext, cluster: ClusterRuns, runId: string): void {
  cluster.fences.delete(runId);
  cluster.tails.delete(runId);
  const run = ctx.active.get(runId);
  if (run === undefined) return;
  ctx.active.delete(runId);
  run.execution.interrupt();
  ctx.logger.warn(
    {
      runId,
      hint: 'this instance lost the graph run lease (paused or cut off from the database); another instance took it over',
      errorKind: 'dependency',
    },
    'graph run lease lost',
  );
}

/** Renews the lease of each run this instance executes; a run whose lease is gone stops here. */
export async function renewOwned(ctx: GraphContext, cluster: ClusterRuns): Promise<void> {
  for (const runId of [...ctx.active.keys()]) {
    const fence = cluster.fences.get(runId);
    if (fence === undefined) continue;
    if (!(await cluster.rows.renew(runId, fence))) loseRun(ctx, cluster, runId);
  }
}

/**
 * Claims unfinished runs nobody holds (released at a shutdown, or their owner's lease expired),
 * oldest first: each comes back with the fence this instance now holds it at.
 */
export async function claimOrphans(cluster: ClusterRuns, where?: { runId: string }): Promise<RunRow[]> {
  const claimed = await cluster.rows.claim({
    where:
      where === undefined
        ? "status IN ('pending', 'running')"
        : "run_id = ? AND status IN ('pending', 'running')",
    args: where === undefined ? [] : [where.runId],
    orderBy: 'started_at',
    limit: CLAIM_BATCH,
  });
  return claimed.map((claim) => {
    const row = claim.row as RunRow;
    cluster.fences.set(row.run_id, claim.fence);
    return row;
  });
}

/** The owner's side of a cancel asked elsewhere: runs flagged `cancel_requested` are cancelled here. */
export async function pickUpCancels(ctx: GraphContext): Promise<void> {
  const ids = [...ctx.active.keys()];
  for (let offset = 0; offset < ids.length; offset += 500) {
    const chunk = ids.slice(offset, offset + 500);
    const rows = await ctx.db.query<{ run_id: string }>(
      `SELECT run_id FROM graph_runs WHERE cancel_requested = 1 AND run_id IN (${chunk.map(() => '?').join(', ')})`,
      chunk,
    );
    for (const row of rows) {
      if (ctx.active.get(row.run_id)?.execution.cancel()) {
        ctx.logger.info({ runId: row.run_id }, 'graph run cancelled from another instance');
      }
    }
  }
}

/**
 * A cancel of a run this instance does not execute: the request is recorded on the row (the
 * truth the owner polls) and announced on the bus. A run nobody holds is claimed and finished
 * `cancelled` here; a live owner stops it (in-flight nodes finish, nothing new starts).
 */
export async function cancelElsewhere(
  ctx: GraphContext,
  cluster: ClusterRuns,
  runId: string,
): ReturnType<GraphService['cancel']> {
  const row = await loadRun(ctx, runId);
  if (row.status !== 'pending' && row.status !== 'running') {
    return { runId, status: row.status as RunStatus, cancelled: false };
  }
  const requested = await ctx.db.query<{ run_id: string }>(
    `UPDATE graph_runs SET cancel_requested = 1
     WHERE run_id = ? AND status IN ('pending', 'running') AND cancel_requested = 0 RETURNING run_id`,
    [runId],
  );
  await cluster.coordinator.bus.publish(GRAPH_TOPIC, { runId });
  const [orphan] = await claimOrphans(cluster, { runId });
  if (orphan !== undefined) {
    const fence = cluster.fences.get(runId)!;
    cluster.fences.delete(runId);
    const at = ctx.now();
    await ctx.db.transaction(async (tx) => {
      await tx.execute(
        "UPDATE graph_run_nodes SET status = 'cancelled', finished_at = ?, error = 'run cancelled before the node started' WHERE run_id = ? AND status NOT IN ('completed', 'failed', 'skipped')",
        [at, runId],
      );
      await cluster.rows.complete(
        runId,
        fence,
        { set: "status = 'cancelled', cancel_requested = 1, finished_at = ?", args: [at] },
        tx,
      );
    });
    return { runId, status: 'cancelled', cancelled: true };
  }
  const now = await loadRun(ctx, runId);
  const status = now.status === 'pending' || now.status === 'running' ? 'running' : (now.status as RunStatus);
  return { runId, status, cancelled: requested.length === 1 };
}

/**
 * Starts the owner's loop: cancel notices (and the bus's polling backstop) are picked up at
 * once, and every third of a lease this instance renews its runs and takes over orphans.
 */
export function startClusterLoop(
  ctx: GraphContext,
  cluster: ClusterRuns,
  takeOver: () => Promise<unknown>,
): void {
  const unwatch = cluster.coordinator.bus.watch(GRAPH_TOPIC, () => pickUpCancels(ctx));
  let ticking = false;
  const timer = setInterval(
    () => {
      if (ticking || ctx.closed) return;
      ticking = true;
      renewOwned(ctx, cluster)
        .then(takeOver)
        .catch((error: unknown) =>
          ctx.logger.warn(
            { err: error, hint: 'check that the PostgreSQL server is reachable', errorKind: 'dependency' },
            'graph run lease renewal or takeover failed',
          ),
        )
        .finally(() => {
          ticking = false;
        });
    },
    Math.max(50, Math.floor(cluster.leaseMs / 3)),
  );
  timer.unref();
  cluster.stop = () => {
    unwatch();
    clearInterval(timer);
  };
}

/** At close: stops the loop and hands this instance's runs back, so another takes them over at once. */
export async function releaseOwned(cluster: ClusterRuns): Promise<void> {
  cluster.stop?.();
  cluster.stop = undefined;
  await Promise.all([...cluster.tails.values()]);
  for (const [runId, fence] of [...cluster.fences]) {
    await cluster.rows.complete(runId, fence).catch(() => false);
  }
  cluster.fences.clear();
  cluster.tails.clear();
}
