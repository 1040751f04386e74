import type { AutonomyBlock, AutonomyRunSummary, CronWakeGateBlock } from '@agentd/contracts';
import type { SessionIndexRecord, TrajectoryRecord } from '@agentd/evidence';
import type { DiagnosticEvent } from './evidence-store.js';
import { REPORT_SCHEMA_VERSION, type RootCause, type Truncation } from './incident-report.js';
import {
  autonomyFindings,
  degradationFindings,
  efficiencyFindings,
  FLEET_THRESHOLDS,
  findingList,
  pipelineAuthoring,
  postureFindings,
  recurringSignalFindings,
  voiceFindings,
} from './internal/fleet-findings.js';
import { bump, compare, ratio, sortedObject, str, usd } from './internal/values.js';

/** Diagnostic categories the fleet report reads. */
export const FLEET_CATEGORIES = [
  'tool:breaker',
  'config_posture',
  'voice_degraded',
  'voice:turn',
  'pipeline:authored',
  'orchestrate:run_summary',
  'autonomy_denial_breaker',
  'learning:lifecycle_swept',
  'cron_wake_gate',
  'pipeline_authoring',
] as const;

/**
 * The `cronWakeGate` block (as `summarizeWakeGateFires` of @agentd/cron-wakegate computes it);
 * the shape is @agentd/contracts' `CronWakeGateBlock`.
 */
export type FleetCronWakeGate = CronWakeGateBlock;

/** Everything a fleet report is computed from. */
export interface FleetEvidence {
  windowHours: number;
  /** Session-index records in the window (synthetic ones already excluded). */
  index: SessionIndexRecord[];
  /** Tool-call records in the window of the sessions that made tool calls. */
  toolCalls: Array<Extract<TrajectoryRecord, { type: 'tool_call' }>>;
  /** Diagnostic rows in the window, oldest first. */
  diagnostics: DiagnosticEvent[];
  cronWakeGate?: FleetCronWakeGate | undefined;
  /** The durable run table's figures; absent when the durable store is not wired. */
  autonomy?: AutonomyRunSummary | undefined;
  coverage: {
    sessionSummaryStore: { found: boolean; rows: number };
    sessionIndex: { daysRead: number; daysMissing: number };
    billing: { present: boolean };
    files?: FilesCoverage;
  };
}

/**
 * What the evidence files of a report cover. In cluster mode each instance writes its own
 * (session index, trajectories, offloads): a report read on one instance sees that instance's
 * files only, while what comes from tables (diagnostics, sessions, runs, cron) is the cluster's.
 */
export interface FilesCoverage {
  scope: 'this-instance';
  instanceId: string;
  partial: true;
}

/** One finding. */
export interface Finding {
  code: string;
  detail: string;
  count: number;
  hint: string;
}

/** The result of `obs.fleet.health`. Field order is the contract's. */
export interface FleetHealthReport {
  schemaVersion: 1;
  windowHours: number;
  sessions: { total: number; degraded: number; degradedRate: number };
  degradedByCause: Record<string, number>;
  topErrorKinds: Array<{ kind: string; count: number }>;
  breakerTripTotal: number;
  toolStats: Record<string, { ok: number; failed: number }>;
  cost: { costUsd: number; totalTokens: number };
  activity: {
    activeAgents: string[];
    activeChannels: string[];
    exitReasons: Record<string, number>;
    turnTotal: number;
    tokenTotal: number;
  };
  findings: Finding[];
  likelyRootCause: RootCause;
  pipelineAuthoringGate?: { buildAuthor: boolean; reason: string };
  autonomy?: AutonomyBlock;
  cronWakeGate?: FleetCronWakeGate;
  suggestedNextSteps: string[];
  truncations: Truncation[];
  coverage?: FleetEvidence['coverage'];
}

export { FLEET_THRESHOLDS } from './internal/fleet-findings.js';

const FINDING_RANK: Record<string, number> = {
  fleet_autonomy_degradation: 0,
  fleet_high_degraded_rate: 1,
  fleet_acute_degradation: 2,
  fleet_config_posture: 3,
  fleet_recurring_health_signal: 4,
};

/**
 * Builds the FleetHealthReport from the evidence of a window. Pure: the same evidence gives
 * byte-identical JSON.
 */
export function buildFleetHealthReport(evidence: FleetEvidence): FleetHealthReport {
  const truncations: Truncation[] = [];
  const bySession = new Map<string, { degraded: boolean; cause: string | undefined }>();
  const exitReasons = new Map<string, number>();
  const agents = new Set<string>();
  const channels = new Set<string>();
  let costUsd = 0;
  let tokenTotal = 0;
  const errorKinds = new Map<string, number>();
  for (const record of evidence.index) {
    const session = bySession.get(record.sessionKey) ?? { degraded: false, cause: undefined };
    if (record.outcome.degraded) {
      session.degraded = true;
      session.cause = record.outcome.endReason;
      if (record.errorCode) bump(errorKinds, record.errorCode);
    }
    bySession.set(record.sessionKey, session);
    bump(exitReasons, record.outcome.endReason);
    agents.add(record.agentId);
    channels.add(record.channelType);
    costUsd += record.costUsd;
    tokenTotal += record.tokens.total;
  }
  const sessions = [...bySession.values()];
  const degraded = sessions.filter((session) => session.degraded);
  const degradedByCause = new Map<string, number>();
  for (const session of degraded) bump(degradedByCause, session.cause ?? 'unknown');

  const tools = new Map<string, { ok: number; failed: number }>();
  for (const call of evidence.toolCalls) {
    const entry = tools.get(call.toolName) ?? { ok: 0, failed: 0 };
    tools.set(call.toolName, entry);
    if (call.ok) entry.ok += 1;
    else {
      entry.failed += 1;
      bump(errorKinds, call.errorKind ?? 'tool_error');
    }
  }
  const toolList = [...tools.entries()].sort(
    ([a, x], [b, y]) => y.failed - x.failed || y.ok - x.ok || compare(a, b),
  );
  if (toolList.length > FLEET_THRESHOLDS.maxTools) {
    truncations.push({
      field: 'toolStats',
      kept: FLEET_THRESHOLDS.maxTools,
      dropped: toolList.length - FLEET_THRESHOLDS.maxTools,
    });
  }
  const kinds = [...errorKinds.entries()]
    .sort(([a, x], [b, y]) => y - x || compare(a, b))
    .map(([kind, n]) => ({ kind, count: n }));
  if (kinds.length > FLEET_THRESHOLDS.maxErrorKinds) {
    truncations.push({
      field: 'topErrorKinds',
      kept: FLEET_THRESHOLDS.maxErrorKinds,
      dropped: kinds.length - FLEET_THRESHOLDS.maxErrorKinds,
    });
  }

  const rows = (category: string) => evidence.diagnostics.filter((row) => row.category === category);
  const breakerTripTotal = rows('tool:breaker').filter(
    (row) => (str(row.data, 'event') ?? 'opened') === 'opened',
  ).length;

  // Tool-breaker trips of sub-agent run sessions (`<tenant>:subagent:<runId>`) join the run figures.
  const autonomy: AutonomyBlock | undefined = evidence.autonomy && {
    ...evidence.autonomy,
    breakerTrips: rows('tool:breaker').filter(
      (row) =>
        (str(row.data, 'event') ?? 'opened') === 'opened' && (row.sessionKey ?? '').includes(':subagent:'),
    ).length,
  };

  const { findings, find } = findingList();
  if (autonomy) autonomyFindings(find, autonomy);
  degradationFindings(find, { total: sessions.length, degraded }, degradedByCause);
  postureFindings(find, rows);
  voiceFindings(find, rows);
  const pipelineAuthoringGate = pipelineAuthoring(find, rows);
  efficiencyFindings(find, rows, evidence);
  recurringSignalFindings(find, evidence.diagnostics);

  findings.sort(
    (a, b) =>
      (FINDING_RANK[a.code] ?? 10) - (FINDING_RANK[b.code] ?? 10) ||
      compare(a.code, b.code) ||
      compare(a.detail, b.detail),
  );
  if (findings.length > FLEET_THRESHOLDS.maxFindings) {
    truncations.push({
      field: 'findings',
      kept: FLEET_THRESHOLDS.maxFindings,
      dropped: findings.length - FLEET_THRESHOLDS.maxFindings,
    });
    findings.length = FLEET_THRESHOLDS.maxFindings;
  }

  // Rule 6: the highest-ranked fleet-level finding is the likely root cause.
  const top = findings.find((finding) => finding.code in FINDING_RANK);
  const likelyRootCause: RootCause = top
    ? { code: top.code, detail: top.detail, suggestedNextSteps: [top.hint] }
    : {
        code: 'fleet_healthy',
        detail: `${sessions.length} session(s), none degraded by a fleet-level cause`,
        suggestedNextSteps: [],
      };
  const suggestedNextSteps = [
    ...new Set([...likelyRootCause.suggestedNextSteps, ...findings.map((finding) => finding.hint)]),
  ].filter((step) => step.length > 0);
  if (evidence.coverage.sessionIndex.daysRead === 0)
    suggestedNextSteps.push('no session-index files in the window; check the data directory');

  const report: FleetHealthReport = {
    schemaVersion: REPORT_SCHEMA_VERSION,
    windowHours: evidence.windowHours,
    sessions: {
      total: sessions.length,
      degraded: degraded.length,
      degradedRate: ratio(degraded.length, sessions.length),
    },
    degradedByCause: sortedObject(degradedByCause),
    topErrorKinds: kinds.slice(0, FLEET_THRESHOLDS.maxErrorKinds),
    breakerTripTotal,
    toolStats: Object.fromEntries(
      toolList.slice(0, FLEET_THRESHOLDS.maxTools).sort(([a], [b]) => compare(a, b)),
    ),
    cost: { costUsd: usd(costUsd), totalTokens: tokenTotal },
    activity: {
      activeAgents: [...agents].sort(),
      activeChannels: [...channels].sort(),
      exitReasons: sortedObject(exitReasons),
      turnTotal: evidence.index.length,
      tokenTotal,
    },
    findings,
    likelyRootCause,
    pipelineAuthoringGate,
    ...(autonomy ? { autonomy } : {}),
    ...(evidence.cronWakeGate ? { cronWakeGate: evidence.cronWakeGate } : {}),
    suggestedNextSteps,
    truncations,
    coverage: evidence.coverage,
  };
  return report;
}
