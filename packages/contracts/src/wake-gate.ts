/** Counts of gated cron fires for one agent (or all), as the fleet report's `cronWakeGate` holds them. */
export interface WakeGateFireCounts {
  fires: number;
  skipped: number;
  skipRate: number;
  failedOpen: number;
  failOpenRate: number;
  turnsSaved: number;
  toolCalls: number;
}

/**
 * The fleet report's `cronWakeGate` block: @agentd/cron-wakegate computes it from its run
 * history, @agentd/obs-reports puts it into the fleet report.
 */
export interface CronWakeGateBlock {
  fires: { total: number; skipped: number; skipRate: number; failedOpen: number; failOpenRate: number };
  turnsSaved: number;
  toolCalls: number;
  perAgent: Array<{ agentId: string } & WakeGateFireCounts>;
}
