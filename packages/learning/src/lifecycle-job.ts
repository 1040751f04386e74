import type { AgentTurnRequest, AgentTurnResult, AgentTurnRunner } from '@agentd/contracts';
import type { LearningService } from './learning-service.js';

/** Name of the cron job whose runs are the lifecycle sweeps (shown in `cron.runs`). */
export const LIFECYCLE_JOB_NAME = 'Memory lifecycle';

/** The cron service as the lifecycle job needs it (structurally `@agentd/cron-wakegate`'s). */
export interface LifecycleCron {
  list(): ReadonlyArray<{
    id: string;
    name: string;
    tenant?: string | undefined;
    everyMs?: number | undefined;
  }>;
  add(input: {
    name: string;
    message: string;
    agentId?: string;
    schedule: { kind: 'interval'; everyMs: number };
  }): Promise<{ id: string }>;
  update(input: { name: string; schedule?: { kind: 'interval'; everyMs: number } }): Promise<unknown>;
}

/**
 * Makes sure the `Memory lifecycle` job exists (daemon-wide, every `intervalMs`) and answers
 * the session key its runs use (`cron:<job id>`): a run in that session is a sweep.
 */
export async function ensureLifecycleJob(cron: LifecycleCron, intervalMs: number): Promise<string> {
  const existing = cron.list().find((job) => job.name === LIFECYCLE_JOB_NAME && job.tenant === undefined);
  if (existing) {
    if (existing.everyMs !== intervalMs) {
      await cron.update({ name: LIFECYCLE_JOB_NAME, schedule: { kind: 'interval', everyMs: intervalMs } });
    }
    return `cron:${existing.id}`;
  }
  const job = await cron.add({
    name: LIFECYCLE_JOB_NAME,
    message: 'Memory lifecycle sweep: run by the daemon, not by a model.',
    schedule: { kind: 'interval', everyMs: intervalMs },
  });
  return `cron:${job.id}`;
}

/**
 * Removes the daemon-wide `Memory lifecycle` job (learning switched off): a sweep of a disabled
 * learning layer would only fail every interval. True when there was one.
 */
export async function dropLifecycleJob(
  cron: Pick<LifecycleCron, 'list'> & { remove(name: string): Promise<unknown> },
): Promise<boolean> {
  const existing = cron.list().find((job) => job.name === LIFECYCLE_JOB_NAME && job.tenant === undefined);
  if (!existing) return false;
  await cron.remove(LIFECYCLE_JOB_NAME);
  return true;
}

/**
 * The turn runner cron uses: a run of the lifecycle job sweeps (its summary becomes the run's
 * summary in `cron.runs`; a failed sweep is a failed run); every other turn goes to `inner`.
 */
export function lifecycleRunner(
  inner: AgentTurnRunner,
  learning: () => LearningService | undefined,
  sessionKey: () => string | undefined,
): AgentTurnRunner {
  return {
    async runTurn(request: AgentTurnRequest): Promise<AgentTurnResult> {
      const service = learning();
      const key = sessionKey();
      if (!service || key === undefined || request.origin !== 'cron' || request.sessionKey !== key) {
        return inner.runTurn(request);
      }
      const { summary } = await service.sweep();
      return {
        response: summary,
        sessionKey: key,
        finishReason: 'stop',
        tokensUsed: { input: 0, output: 0, total: 0 },
      };
    },
  };
}
