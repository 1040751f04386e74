/**
 * The fleet report's `autonomy` block: counts of sub-agent runs in the window.
 * `runs.degraded = orphaned + revoked`; `worstRootRunId` is the root of the most severe
 * degraded run (orphaned, then denial breaker, then killed, then revoked).
 */
export interface AutonomyBlock {
  runs: { total: number; degraded: number; degradedRate: number };
  orphaned: number;
  resumed: number;
  revoked: number;
  killed: number;
  /** Tool-breaker trips in run sessions. */
  breakerTrips: number;
  denialBreakerTrips: number;
  budgetBreaches: number;
  costUsd: number;
  worstRootRunId?: string;
}

/**
 * What @agentd/autonomy computes from its durable run table and health signals; the fleet
 * report adds `breakerTrips` from the tool-breaker evidence of run sessions.
 */
export type AutonomyRunSummary = Omit<AutonomyBlock, 'breakerTrips'>;
