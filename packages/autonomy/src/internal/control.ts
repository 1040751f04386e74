import { AutonomyError } from '../errors.js';
import type { LeaseView } from '../lease-store.js';
import type { RunRecord } from '../run-store.js';
import { type RunView, runView } from '../run-view.js';
import { withNotice } from './cluster.js';
import type { ActiveRun, AutonomyContext } from './context.js';
import { stopRuns } from './execute.js';
import { effectiveCapabilities, type SpawnResult, type spawnRun } from './spawn.js';

/** Steering is limited to one call per target every 2 s (the contract). */
export const STEER_INTERVAL_MS = 2000;

/** The run a target names: a run id, or the session key of a run. */
export async function resolveTarget(ctx: AutonomyContext, target: string): Promise<RunRecord> {
  const active = ctx.active.get(target) ?? ctx.active.get(ctx.bySession.get(target) ?? '');
  const record = active?.record ?? (await ctx.store.get(target)) ?? (await ctx.store.bySession(target));
  if (!record) throw new AutonomyError('RUN_NOT_FOUND', `Run not found: ${target}`, { data: { target } });
  return record;
}

/**
 * The runs at and below `runId` (its descendants through the parent links): those active here,
 * and the ids of those still running elsewhere (a cluster's other instances).
 */
async function subtree(
  ctx: AutonomyContext,
  record: RunRecord,
): Promise<{ local: ActiveRun[]; elsewhere: string[] }> {
  const tree = await ctx.store.tree(record.rootRunId);
  const below = new Set([record.runId]);
  // Parents are older than their children: one pass in start order finds every descendant.
  for (const run of [...tree].sort((a, b) => a.startedAt - b.startedAt)) {
    if (run.parentRunId !== undefined && below.has(run.parentRunId)) below.add(run.runId);
  }
  const elsewhere = tree
    .filter((run) => below.has(run.runId) && run.status === 'running' && !ctx.active.has(run.runId))
    .map((run) => run.runId);
  // Deepest first, so no child outlives the parent that would wait for it.
  const local = [...below]
    .map((runId) => ctx.active.get(runId))
    .filter((run): run is ActiveRun => run !== undefined)
    .sort((a, b) => b.record.depth - a.record.depth);
  return { local, elsewhere };
}

/**
 * Asks the owners of runs executing on other instances to stop them (cluster mode; a row flag
 * and a notice, picked up by the owner at once or at its next poll). Answers how many.
 */
async function stopElsewhere(
  ctx: AutonomyContext,
  runIds: readonly string[],
  reason: 'killed' | 'steered',
  detail: string | undefined,
): Promise<number> {
  const cluster = ctx.cluster;
  if (cluster === undefined || runIds.length === 0) return 0;
  return withNotice(cluster, (tx) => ctx.store.requestStop(tx, runIds, reason, detail));
}

/** Kills a run and everything below it; revokes their leases. Answers how many runs stopped. */
export async function killRun(
  ctx: AutonomyContext,
  record: RunRecord,
  reason: 'killed' | 'steered',
  detail?: string,
): Promise<number> {
  const { local, elsewhere } = await subtree(ctx, record);
  if (record.leaseId) await ctx.leases.revoke({ leaseId: record.leaseId });
  return (await stopRuns(ctx, local, reason, detail)) + (await stopElsewhere(ctx, elsewhere, reason, detail));
}

/** Kills a whole tree and revokes every lease in it; the rows are poisoned against resumes. */
export async function killTree(ctx: AutonomyContext, rootRunId: string): Promise<number> {
  const tree = await ctx.store.tree(rootRunId);
  if (tree.length === 0)
    throw new AutonomyError('RUN_NOT_FOUND', `Run not found: ${rootRunId}`, { data: { target: rootRunId } });
  await ctx.leases.revoke({ rootRunId });
  await ctx.store.markRevoked(rootRunId, ctx.now());
  const runs = [...ctx.active.values()]
    .filter((run) => run.record.rootRunId === rootRunId)
    .sort((a, b) => b.record.depth - a.record.depth);
  const elsewhere = tree
    .filter((run) => run.status === 'running' && !ctx.active.has(run.runId))
    .map((run) => run.runId);
  const detail = 'run tree killed (run.kill)';
  return (
    (await stopRuns(ctx, runs, 'killed', detail)) + (await stopElsewhere(ctx, elsewhere, 'killed', detail))
  );
}

/**
 * Revokes leases (a lease and those below it, or a whole tree's). A cooperative stop: the runs
 * go on, but every later validate, renew and tool call is refused. Answers how many leases.
 */
export async function revokeLeases(
  ctx: AutonomyContext,
  target: { leaseId: string } | { rootRunId: string },
): Promise<number> {
  const revoked = await ctx.leases.revoke(target);
  const at = ctx.now();
  for (const runId of new Set(revoked.map((lease) => lease.runId))) {
    const active = ctx.active.get(runId);
    if (active) active.record.revoked = true;
  }
  for (const rootRunId of new Set(revoked.map((lease) => lease.rootRunId))) {
    await ctx.store.markRevoked(rootRunId, at);
  }
  for (const lease of revoked) await ctx.store.signal('revoked', lease, at);
  // Owners on other instances mark their runs revoked on the notice (the lease check already refuses).
  if (ctx.cluster !== undefined && revoked.length > 0) await withNotice(ctx.cluster, async () => undefined);
  return revoked.length;
}

/** Steers a running run, by kill and respawn or by injection (`security.agentToAgent.steerInject`). */
export async function steerRun(
  ctx: AutonomyContext,
  target: string,
  message: string,
  spawn: (request: Parameters<typeof spawnRun>[1]) => Promise<SpawnResult>,
): Promise<
  { status: 'steered_inject'; runId: string } | { status: 'steered'; oldRunId: string; newRunId: string }
> {
  const record = await resolveTarget(ctx, target);
  const at = ctx.now();
  // Only steers of the last 2 s matter; older ones are forgotten so the map stays small.
  for (const [runId, steered] of ctx.steeredAt)
    if (at - steered >= STEER_INTERVAL_MS) ctx.steeredAt.delete(runId);
  const last = ctx.steeredAt.get(record.runId);
  if (last !== undefined && at - last < STEER_INTERVAL_MS) {
    throw new AutonomyError(
      'RATE_LIMITED',
      `Steering of run ${record.runId} is limited to one call every 2 seconds`,
      {
        data: { runId: record.runId, retryInMs: STEER_INTERVAL_MS - (at - last) },
      },
    );
  }
  const run = ctx.active.get(record.runId);
  // In a cluster a running run may execute on another instance: its owner gets the steer.
  const cluster = record.status === 'running' && run === undefined ? ctx.cluster : undefined;
  if ((!run && cluster === undefined) || record.status !== 'running') {
    throw new AutonomyError('NOT_RUNNING', `Run ${record.runId} is not running (status ${record.status})`, {
      data: { runId: record.runId, status: record.status },
    });
  }
  ctx.steeredAt.set(record.runId, at);
  if (ctx.settings.security.agentToAgent.steerInject) {
    // Taken as a user message into the running turn at its next step boundary (after the tool
    // results, before the next model call); the tool call in progress is not interrupted, and
    // the run's tool set stays what it was at spawn.
    if (run) run.steerQueue.push(message);
    else if (cluster) await withNotice(cluster, (tx) => ctx.store.queueSteer(tx, record.runId, message, at));
    return { status: 'steered_inject', runId: record.runId };
  }
  await killRun(ctx, record, 'steered', 'replaced by a steered run');
  const spawned = await spawn({
    parentSessionKey: record.parentSessionKey,
    task: message,
    agentId: record.agentId,
    clientId: record.clientId,
    memoryTenant: record.memoryTenant,
    capabilities: record.capabilities,
  });
  // The limit is shared by both modes and follows the target to its replacement.
  ctx.steeredAt.set(spawned.runId, at);
  return { status: 'steered', oldRunId: record.runId, newRunId: spawned.runId };
}

/** Mints a child lease under a running run's lease, never wider than the run's capabilities now. */
export async function mintChildLease(
  ctx: AutonomyContext,
  target: string,
  request: { capabilities: readonly string[]; ttlMs?: number },
): Promise<{ lease: LeaseView; secret: string }> {
  const record = await resolveTarget(ctx, target);
  if (record.status !== 'running' || !record.leaseId || !ctx.active.has(record.runId)) {
    throw new AutonomyError('NOT_RUNNING', `Run ${record.runId} is not running (status ${record.status})`, {
      data: { runId: record.runId, status: record.status },
    });
  }
  const allowed = effectiveCapabilities(ctx, record);
  const wider = request.capabilities.filter((name) => !allowed.includes(name));
  if (wider.length > 0) {
    throw new AutonomyError(
      'INVALID_OPTIONS',
      `capabilities: not held by run ${record.runId}: ${wider.slice(0, 5).join(', ')}`,
      { data: { issues: [{ path: ['capabilities'], message: 'wider than the run' }] } },
    );
  }
  return ctx.leases.mint({
    runId: record.runId,
    rootRunId: record.rootRunId,
    agentId: record.agentId,
    capabilities: request.capabilities,
    ttlMs: request.ttlMs ?? ctx.settings.autonomy.leaseTtlMs,
    parentLeaseId: record.leaseId,
  });
}

/** Waits until the runs have ended (or `timeoutMs` passed, or `signal` aborted); answers their records. */
export async function waitForRuns(
  ctx: AutonomyContext,
  runIds: readonly string[],
  options: { timeoutMs: number; signal?: AbortSignal },
): Promise<RunView[]> {
  const pending = runIds.map((runId) => ctx.active.get(runId)?.done).filter((done) => done !== undefined);
  // In a cluster a run may execute on another instance: its end is read from its row.
  const elsewhere = runIds.filter((runId) => !ctx.active.has(runId));
  if (ctx.cluster !== undefined && elsewhere.length > 0)
    pending.push(endedElsewhere(ctx, elsewhere, options));
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.all(pending),
    new Promise((resolve) => {
      timer = setTimeout(resolve, options.timeoutMs);
      options.signal?.addEventListener('abort', resolve, { once: true });
    }),
  ]);
  clearTimeout(timer);
  return Promise.all(runIds.map(async (runId) => runView(await resolveTarget(ctx, runId), ctx.now())));
}

/** How often a wait re-reads the rows of runs executing on other instances. */
const ELSEWHERE_POLL_MS = 250;

/** Settles once none of `runIds` is `running` in the table (or the wait is over). */
async function endedElsewhere(
  ctx: AutonomyContext,
  runIds: readonly string[],
  options: { timeoutMs: number; signal?: AbortSignal },
): Promise<void> {
  const until = Date.now() + options.timeoutMs;
  while (Date.now() < until && !options.signal?.aborted) {
    const records = await Promise.all(runIds.map((runId) => ctx.store.get(runId)));
    if (records.every((record) => record === undefined || record.status !== 'running')) return;
    await new Promise((resolve) => setTimeout(resolve, ELSEWHERE_POLL_MS).unref());
  }
}
