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

/**
 * One tool server (an `mcp.servers` entry) as its host reports it, for the consumers that show
 * it beside other facts (`capabilities.introspect`): declared here so they need no MCP dependency.
 */
export interface ToolServerStatus {
  id: string;
  /** `idle`, `connecting`, `connected`, `reconnecting`, `closed` or `disabled`. */
  state: string;
  /** Its tools as agents see them (`<id>__<tool>`). */
  tools: string[];
  /** Agents allowed its tools (ids or `*`). */
  agents: string[];
  /** The last connection or listing error (never a secret), or null. */
  lastError: string | null;
}
