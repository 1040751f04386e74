import type { AgentTurnResult } from '@agentd/contracts';
import type { RunEnd, RunRecord } from '../run-store.js';
import { ownerOf } from './cluster.js';
import type { ActiveRun, AutonomyContext } from './context.js';

/** The longest note a run's end leaves on its parent session. */
const MAX_NOTE_CHARS = 4000;

/** Why a run's controller was aborted (the abort reason decides the end status). */
export type StopReason = 'killed' | 'timeout' | 'denial_breaker' | 'steered' | 'shutdown';

/** The end a stop reason writes. */
function stopEnd(reason: StopReason, at: number, detail?: string): RunEnd {
  switch (reason) {
    case 'timeout':
      return {
        status: 'timeout',
        endReason: 'timeout',
        error: 'run exceeded autonomy.runTimeoutMs',
        completedAt: at,
      };
    case 'denial_breaker':
      // The contract's transition: the tree ends `completed`, counted as a denial-breaker trip.
      return {
        status: 'completed',
        endReason: 'denial_breaker',
        error: detail ?? 'capability-denial breaker tripped',
        completedAt: at,
      };
    default:
      return {
        status: 'killed',
        endReason: reason,
        error: detail ?? (reason === 'steered' ? 'replaced by a steered run' : 'killed'),
        completedAt: at,
      };
  }
}

/** Budget the run has left to spend, or the first limit it has passed. */
export function budgetExceeded(record: RunRecord): 'tokens' | 'cost' | 'tool_calls' | undefined {
  const { budget } = record;
  if (record.tokens.total >= budget.maxTokens) return 'tokens';
  if (record.costUsd >= budget.maxCostUsd) return 'cost';
  if (record.toolCalls >= budget.maxToolCalls) return 'tool_calls';
  return undefined;
}

/** Records a budget breach of a run once. */
export async function recordBreach(ctx: AutonomyContext, run: ActiveRun, limit: string): Promise<void> {
  if (run.breached) return;
  run.breached = true;
  const { runId, rootRunId, agentId } = run.record;
  await ctx.store.signal('budget_breach', run.record, ctx.now());
  ctx.events.emit('autonomy:budget_breach', { runId, rootRunId, agentId, limit, ts: ctx.now() });
  ctx.logger.warn(
    {
      agentId,
      runId,
      reason: limit,
      hint: 'the sub-agent run used up its budget; raise autonomy.budget or give it a smaller task',
      errorKind: 'resource',
    },
    'sub-agent run budget exceeded',
  );
}

/** Runs one turn of a run; an abort surfaces as a rejected or `cancelled` turn. */
async function turn(
  ctx: AutonomyContext,
  run: ActiveRun,
  message: string,
  index: number,
): Promise<AgentTurnResult> {
  const { record } = run;
  const started = ctx.now();
  const result = await ctx.runner().runTurn({
    agentId: record.agentId,
    message,
    sessionKey: record.sessionKey,
    origin: 'subagent',
    signal: run.controller.signal,
    allowedTools: record.capabilities,
    // Steered messages join this turn at its next step boundary (after the tool results,
    // before the next model call); one arriving during the last model call waits for the
    // next turn (executeRun below).
    injections: () => run.steerQueue.splice(0),
    // Each turn of each start runs once, even when the runtime is asked twice.
    turnKey: `subagent:${record.runId}:r${record.resumed}:${index}`,
    ...(record.memoryTenant !== undefined ? { memoryTenant: record.memoryTenant } : {}),
  });
  const costUsd = await ctx.costOf(record.sessionKey, started).catch(() => 0);
  const usage = { ...result.tokensUsed, costUsd };
  await ctx.store.addUsage(record.runId, usage, ctx.now());
  record.tokens = {
    input: record.tokens.input + usage.input,
    output: record.tokens.output + usage.output,
    total: record.tokens.total + usage.total,
  };
  record.costUsd += costUsd;
  return result;
}

/**
 * Executes a run: its task as a turn, then each steered message the turn did not take (one
 * that came during its last model call) as a further turn of the same session, until none is queued, the budget is spent, or the run is stopped. Writes the end.
 */
export async function executeRun(ctx: AutonomyContext, run: ActiveRun): Promise<void> {
  const { record, controller } = run;
  const timer = setTimeout(
    () => controller.abort('timeout' satisfies StopReason),
    Math.max(1, record.startedAt + ctx.settings.autonomy.runTimeoutMs - ctx.now()),
  );
  timer.unref?.();
  let end: RunEnd;
  try {
    let message: string | undefined = record.task;
    let response = '';
    let failed: string | undefined;
    let timedOut = false;
    for (let index = 0; message !== undefined && !controller.signal.aborted; index++) {
      const limit = budgetExceeded(record);
      if (limit && limit !== 'tool_calls') {
        await recordBreach(ctx, run, limit);
        failed = `budget exceeded: ${limit}`;
        break;
      }
      const result = await turn(ctx, run, message, index);
      response = result.response;
      if (result.finishReason === 'error') failed = 'the turn failed';
      // The agent's own turn limit (timeouts.turnMs) ends the run as its run limit would.
      if (result.finishReason === 'timeout') timedOut = true;
      if (failed || timedOut) break;
      message = run.steerQueue.shift();
    }
    const at = ctx.now();
    if (controller.signal.aborted) end = stopEnd(controller.signal.reason as StopReason, at);
    else if (failed) end = { status: 'failed', endReason: 'error', response, error: failed, completedAt: at };
    else if (timedOut) {
      end = {
        status: 'timeout',
        endReason: 'timeout',
        response,
        error: 'the turn timed out',
        completedAt: at,
      };
    } else end = { status: 'completed', endReason: 'completed', response, completedAt: at };
  } catch (error) {
    const at = ctx.now();
    end = controller.signal.aborted
      ? stopEnd(controller.signal.reason as StopReason, at)
      : { status: 'failed', endReason: 'error', error: errorText(error), completedAt: at };
  } finally {
    clearTimeout(timer);
  }
  // A daemon stop is not an end: the row stays `running` for the next start to resume or orphan.
  if (controller.signal.reason === 'shutdown') return;
  await endRun(ctx, run, end);
}

function errorText(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, 500);
}

/**
 * Writes a run's end (the first end wins), forgets it as active, kills the processes it
 * started, and announces the end: a `session.completed` notification to the client that
 * started the tree and a note on the parent session.
 */
export async function endRun(ctx: AutonomyContext, run: ActiveRun, end: RunEnd): Promise<void> {
  const { record } = run;
  killProcesses(run);
  const owner = ownerOf(ctx, record.runId);
  ctx.cluster?.fences.delete(record.runId);
  const written = await ctx.store.finish(record.runId, end, owner).catch((error: unknown) => {
    ctx.logger.error(
      {
        err: error,
        runId: record.runId,
        hint: 'the run table could not be written; check the database',
        errorKind: 'resource',
      },
      'sub-agent run end not recorded',
    );
    return false;
  });
  ctx.active.delete(record.runId);
  ctx.bySession.delete(record.sessionKey);
  // A tree's denial streak lives as long as some run of the tree runs here.
  if (![...ctx.active.values()].some((other) => other.record.rootRunId === record.rootRunId)) {
    ctx.denials.delete(record.rootRunId);
  }
  if (!written) return;
  Object.assign(record, {
    status: end.status,
    endReason: end.endReason,
    response: end.response,
    error: end.error,
    completedAt: end.completedAt,
  });
  if (end.status === 'killed') await ctx.store.signal('killed', record, end.completedAt);
  ctx.events.emit('autonomy:run_ended', {
    runId: record.runId,
    rootRunId: record.rootRunId,
    agentId: record.agentId,
    status: end.status,
    endReason: end.endReason,
    tokensTotal: record.tokens.total,
    toolCalls: record.toolCalls,
    durationMs: end.completedAt - record.startedAt,
    ts: end.completedAt,
  });
  await announce(ctx, record);
}

/**
 * Tells the client and the parent session that a run ended. The note on the parent session
 * waits for the parent's running turn (it is written between turns), so it is not awaited:
 * a parent turn waiting for this run must not wait for its own note.
 */
async function announce(ctx: AutonomyContext, record: RunRecord): Promise<void> {
  const result = record.response ?? record.error ?? record.status;
  const failed = (error: unknown) =>
    ctx.logger.warn(
      {
        err: error,
        runId: record.runId,
        hint: 'the parent session was not told of the run end; session.run_status has it',
        errorKind: 'internal',
      },
      'sub-agent completion not announced',
    );
  try {
    // Untargeted notifications go to every client; a tenant's result never does.
    const broadcastable = record.clientId !== undefined || record.memoryTenant === undefined;
    if (broadcastable)
      ctx.notifier.current?.(record.clientId, 'session.completed', {
        sessionKey: record.sessionKey,
        result,
        runId: record.runId,
        parentKey: record.parentSessionKey,
        status: record.status,
      });
  } catch (error) {
    failed(error);
  }
  void ctx
    .recordOnParent(
      record.parentSessionKey,
      `[sub-agent run ${record.runId} ${record.status}] ${result}`.slice(0, MAX_NOTE_CHARS),
    )
    .then(() => ctx.store.markAnnounced(record.runId))
    .catch(failed);
}

/** Kills every process the run started (SIGKILL to its process group when it leads one). */
export function killProcesses(run: ActiveRun): void {
  for (const child of run.processes) {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // Not a group leader (or already gone): kill the process itself.
    }
    try {
      child.kill('SIGKILL');
    } catch {
      // Already gone.
    }
  }
  run.processes.clear();
}

/**
 * Stops runs now: aborts their turn (the model call and the tool in progress see the signal),
 * kills their processes and writes their end at once, without waiting for the turn to unwind.
 * Answers how many were running.
 */
export async function stopRuns(
  ctx: AutonomyContext,
  runs: readonly ActiveRun[],
  reason: StopReason,
  detail?: string,
): Promise<number> {
  let stopped = 0;
  for (const run of runs) {
    if (!run.controller.signal.aborted) run.controller.abort(reason);
    stopped++;
    await endRun(ctx, run, stopEnd(reason, ctx.now(), detail));
  }
  return stopped;
}
