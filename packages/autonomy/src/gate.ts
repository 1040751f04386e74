import type { AutonomyGate, GateVerdict } from './gate-types.js';
import type { AutonomyContext } from './internal/context.js';
import type { RunRecord } from './run-store.js';
import { budgetExceeded, recordBreach, stopRuns } from './internal/execute.js';
import { effectiveCapabilities, runOfSession } from './internal/spawn.js';

/** Error kinds of a call refused by policy (a floor-block): these feed the denial breaker. */
const DENIAL_KINDS = new Set([
  'denied',
  'capability_denied',
  'lease_revoked',
  'budget_exceeded',
  'unknown_tool',
]);

const ALLOW: GateVerdict = { allow: true };

function deny(errorKind: string, message: string): GateVerdict {
  return { allow: false, errorKind, message };
}

/**
 * The lease and capability gate of the tool runner's chain, for turns of sub-agent runs (other
 * sessions pass untouched). Before a call: the run's lease must be valid (not revoked, not
 * expired), the tool must be in the run's capability set (narrowed to the default profile
 * once the tree is evicted), and the run's budget must not be spent. A run that was killed or
 * revoked takes no more tool calls in its session. After a call: a call that ran counts
 * against the budget and clears the tree's denial streak; a refused one extends it, and
 * `autonomy.denialBreakerThreshold` refusals in a row end the whole tree.
 */
export function createAutonomyGate(ctx: AutonomyContext): AutonomyGate {
  return {
    name: 'autonomy-lease',
    async before(call) {
      const record = await runOfSession(ctx, call.sessionKey);
      if (!record) return ALLOW;
      const verdict = await decide(ctx, record, call.toolName);
      if (!verdict.allow) {
        // The authorization decision, for the audit trail (capability:audited rows).
        ctx.events.emit('capability:audited', {
          kind: 'capability',
          classification: 'denied',
          outcome: 'failure',
          severity: 'low',
          agentId: record.agentId,
          sessionKey: record.sessionKey,
          runId: record.runId,
          rootRunId: record.rootRunId,
          toolName: call.toolName,
          reason: verdict.errorKind,
        });
      }
      return verdict;
    },
    async after(call, result) {
      const run = ctx.active.get(ctx.bySession.get(call.sessionKey) ?? '');
      if (!run) return result;
      const { record } = run;
      if (result.ran) {
        ctx.denials.set(record.rootRunId, 0);
        record.toolCalls++;
        await ctx.store.addToolCall(record.runId, ctx.now());
        return result;
      }
      if (!DENIAL_KINDS.has(result.errorKind ?? '')) return result;
      const streak = (ctx.denials.get(record.rootRunId) ?? 0) + 1;
      ctx.denials.set(record.rootRunId, streak);
      const threshold = ctx.settings.autonomy.denialBreakerThreshold;
      if (threshold > 0 && streak >= threshold)
        await tripDenialBreaker(ctx, record.rootRunId, record.runId, streak);
      return result;
    },
  };
}

/** The lease, capability and budget decision of one call of a run. */
async function decide(ctx: AutonomyContext, record: RunRecord, toolName: string): Promise<GateVerdict> {
  if (record.status !== 'running') {
    if (record.revoked || record.status === 'killed') {
      return deny(
        'lease_revoked',
        `Run ${record.runId} was ${record.status === 'killed' ? 'killed' : 'revoked'}; its session may not call tools`,
      );
    }
    return ALLOW;
  }
  const usable = record.leaseId
    ? await ctx.leases.usable(record.leaseId)
    : { ok: false as const, reason: 'unknown' };
  if (!usable.ok) {
    return deny(
      'lease_revoked',
      `The lease of run ${record.runId} is ${usable.reason}; no further tool calls`,
    );
  }
  if (!effectiveCapabilities(ctx, record).includes(toolName)) {
    const evicted = ctx.evicted.has(record.rootRunId);
    return deny(
      'capability_denied',
      `Capability denied: ${toolName} is not in this run's ${evicted ? 'default profile (the run tree was evicted)' : 'capability set'}`,
    );
  }
  const spent = budgetExceeded(record);
  if (spent) {
    const run = ctx.active.get(record.runId);
    if (run) await recordBreach(ctx, run, spent);
    return deny('budget_exceeded', `The run's budget is spent (${spent}); no further tool calls`);
  }
  return ALLOW;
}

/** Ends a run tree after `streak` denied calls in a row and counts the trip. */
async function tripDenialBreaker(ctx: AutonomyContext, rootRunId: string, runId: string, streak: number) {
  ctx.denials.delete(rootRunId);
  const tree = [...ctx.active.values()].filter((run) => run.record.rootRunId === rootRunId);
  await ctx.leases.revoke({ rootRunId });
  await stopRuns(
    ctx,
    tree,
    'denial_breaker',
    `capability-denial breaker tripped after ${streak} denied tool calls in a row`,
  );
  const at = ctx.now();
  await ctx.store.signal('denial_breaker', { runId, rootRunId }, at);
  // The health-signal row the fleet report's recurring-signal finding counts.
  ctx.events.emit('autonomy_denial_breaker', {
    runId,
    rootRunId,
    consecutiveDenials: streak,
    runsEnded: tree.length,
    ts: at,
  });
  ctx.audit.emit({
    kind: 'lease',
    classification: 'denied',
    outcome: 'success',
    severity: 'high',
    action: 'denial_breaker',
    runId,
    rootRunId,
    count: tree.length,
  });
  ctx.logger.warn(
    {
      runId,
      count: streak,
      hint: 'a sub-agent kept calling tools it may not use; its run tree was ended. Check its task and tool set',
      errorKind: 'auth',
    },
    'capability-denial breaker tripped',
  );
}
