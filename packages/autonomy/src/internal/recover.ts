import type { RunRecord } from '../run-store.js';
import { claimOrphans, ownerOf } from './cluster.js';
import type { AutonomyContext } from './context.js';
import { startRun } from './spawn.js';

/** What the start found among the runs a previous process left `running`. */
export interface RecoveryResult {
  resumed: number;
  orphaned: number;
  /** Revoked runs closed without resuming (`failed`, end reason `revoked`). */
  closed: number;
}

/**
 * Whether a run left `running` by a crash may be run again: durability on, never revoked, a
 * lease still usable, and no tool call made yet, so re-running its turn repeats no side
 * effect (a turn committed before the crash is answered from the session by its turn key).
 */
async function resumable(ctx: AutonomyContext, record: RunRecord): Promise<boolean> {
  if (!ctx.settings.autonomy.durability.enabled || record.revoked || record.toolCalls > 0) return false;
  if (!record.leaseId) return false;
  return (await ctx.leases.usable(record.leaseId)).ok;
}

/**
 * Settles the runs a previous process left `running`: each is resumed where that is safe
 * (counted `resumed`), else marked `orphaned` and reported; revoked ones are closed. In a
 * cluster these are only the runs whose owner is gone (lease expired, or none): each is first
 * claimed, so one instance takes it over, and a stop asked of it ends it as asked.
 */
export async function recoverRuns(ctx: AutonomyContext): Promise<RecoveryResult> {
  const result: RecoveryResult = { resumed: 0, orphaned: 0, closed: 0 };
  const at = ctx.now();
  const found =
    ctx.cluster === undefined
      ? (await ctx.store.running()).map((record) => ({ record, stop: undefined, detail: undefined }))
      : await claimOrphans(ctx.cluster);
  for (const { record, stop, detail } of found) {
    const owner = ownerOf(ctx, record.runId);
    if (stop !== undefined) {
      await ctx.store.finish(
        record.runId,
        { status: 'killed', endReason: stop, error: detail ?? 'killed', completedAt: at },
        owner,
      );
      ctx.cluster?.fences.delete(record.runId);
      result.closed++;
      continue;
    }
    if (record.revoked) {
      await ctx.store.finish(
        record.runId,
        {
          status: 'failed',
          endReason: 'revoked',
          error: 'revoked before the restart; never resumed',
          completedAt: at,
        },
        owner,
      );
      ctx.cluster?.fences.delete(record.runId);
      result.closed++;
      continue;
    }
    if (await resumable(ctx, record)) {
      await ctx.store.markResumed(record.runId, at);
      await ctx.store.signal('resumed', record, at);
      record.resumed++;
      // The run keeps its start time: its timeout and runtime count from its first start.
      startRun(ctx, record);
      result.resumed++;
      continue;
    }
    await ctx.store.finish(
      record.runId,
      {
        status: 'orphaned',
        endReason: 'restart',
        error: 'the daemon stopped while the run was running and it could not be resumed safely',
        completedAt: at,
      },
      owner,
    );
    ctx.cluster?.fences.delete(record.runId);
    if (record.leaseId) await ctx.leases.revoke({ leaseId: record.leaseId });
    await ctx.store.signal('orphaned', record, at);
    result.orphaned++;
    ctx.audit.emit({
      kind: 'lease',
      classification: 'denied',
      outcome: 'success',
      severity: 'medium',
      action: 'orphaned',
      runId: record.runId,
      rootRunId: record.rootRunId,
    });
    ctx.logger.warn(
      {
        agentId: record.agentId,
        runId: record.runId,
        hint: 'a sub-agent run was cut off by a daemon stop after it had called tools; check its session and spawn it again if needed',
        errorKind: 'internal',
      },
      'sub-agent run orphaned at start',
    );
  }
  return result;
}
