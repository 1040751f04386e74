import type { SessionIndexRecord, TrajectoryRecord } from '@agentd/evidence';
import type { DiagnosticEvent } from './evidence-store.js';
import { REPORT_SCHEMA_VERSION, type RootCause, type Truncation } from './incident-report.js';
import { bool, bump, count, ratio, sortedObject, str, topKey, usd } from './internal/values.js';

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

/** Health-signal categories counted for `fleet_recurring_health_signal`. */
const HEALTH_SIGNALS = ['voice_degraded', 'autonomy_denial_breaker', 'cron_wake_gate', 'pipeline_authoring'];

/** The `cronWakeGate` block (as `summarizeWakeGateFires` of @agentd/cron-wakegate computes it). */
export interface FleetCronWakeGate {
  fires: { total: number; skipped: number; skipRate: number; failedOpen: number; failOpenRate: number };
  turnsSaved: number;
  toolCalls: number;
  perAgent: Array<{
    agentId: string;
    fires: number;
    skipped: number;
    skipRate: number;
    failedOpen: number;
    failOpenRate: number;
    turnsSaved: number;
    toolCalls: number;
  }>;
}

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
  coverage: {
    sessionSummaryStore: { found: boolean; rows: number };
    sessionIndex: { daysRead: number; daysMissing: number };
    billing: { present: boolean };
  };
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
  cronWakeGate?: FleetCronWakeGate;
  suggestedNextSteps: string[];
  truncations: Truncation[];
  coverage?: FleetEvidence['coverage'];
}

/** Thresholds of the fleet findings. */
export const FLEET_THRESHOLDS = {
  /** `fleet_high_degraded_rate` fires at this degraded rate… */
  highDegradedRate: 0.2,
  /** …with at least this many sessions in the window. */
  highDegradedMinSessions: 5,
  /** A health signal seen this often in the window is recurring. */
  recurringSignal: 3,
  /** Rule 9: small-tier invocations needed before the gate can say build. */
  gateMinSmall: 20,
  /** Rule 9: percentage points small-tier validity must trail frontier validity. */
  gateGapPoints: 15,
  maxFindings: 12,
  maxErrorKinds: 10,
  maxTools: 50,
};

const FINDING_RANK: Record<string, number> = {
  fleet_autonomy_degradation: 0,
  fleet_high_degraded_rate: 1,
  fleet_acute_degradation: 2,
  fleet_config_posture: 3,
  fleet_recurring_health_signal: 4,
};

const HINTS: Record<string, string> = {
  fleet_high_degraded_rate: 'explain a degraded session with obs.explain and compare causes',
  fleet_acute_degradation: 'run obs.explain on the sessions of the dominant cause',
  fleet_config_posture: 'review the posture findings and fix the configuration',
  'config_posture:served_below_configured': 'align contextWindow with the served window of the provider',
  'config_posture:imported_skills': 'remove or re-import skills whose registry left the allowlist',
  fleet_recurring_health_signal: 'the signal recurs; read obs.diagnostics for its category',
  voice_health: 'check the voice provider and its keys or local engine',
  pipeline_authoring: 'small models author invalid pipelines; consider a stronger author model',
  orchestrate_efficiency: 'informational: orchestrate runs and the tokens they saved',
  cron_wake_gate_efficiency: 'failed-open gates wake the model defensively; fix the gate scripts',
  memory_lifecycle: 'informational: memory lifecycle sweeps in the window',
};

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

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

  const findings: Finding[] = [];
  const find = (code: string, detail: string, n: number) =>
    findings.push({ code, detail, count: n, hint: HINTS[code] ?? '' });
  const degradedRate = ratio(degraded.length, sessions.length);
  if (
    sessions.length >= FLEET_THRESHOLDS.highDegradedMinSessions &&
    degradedRate >= FLEET_THRESHOLDS.highDegradedRate
  ) {
    find(
      'fleet_high_degraded_rate',
      `${degraded.length} of ${sessions.length} sessions degraded (rate ${degradedRate})`,
      degraded.length,
    );
  }
  const named = degraded.filter((session) => session.cause !== undefined);
  if (named.length > 0) {
    const dominant = topKey(degradedByCause) ?? 'unknown';
    find(
      'fleet_acute_degradation',
      `${named.length} degraded session(s); dominant cause ${dominant}`,
      named.length,
    );
  }

  // Rule 7: the latest posture row only; malformed counts fold to 0.
  const posture = rows('config_posture').at(-1);
  if (posture) {
    const served = count(posture.data, 'servedBelowConfigured');
    const imported = count(posture.data, 'importedSkillsOutsideAllowlist');
    if (served > 0)
      find(
        'config_posture:served_below_configured',
        `${served} provider(s) serve a window below the configured one`,
        served,
      );
    if (imported > 0)
      find(
        'config_posture:imported_skills',
        `${imported} imported skill(s) from registries no longer allowed`,
        imported,
      );
    if (served + imported > 0)
      find('fleet_config_posture', 'the standing configuration has posture problems', served + imported);
  }

  // Rule 8: voice.
  const voiceTurns = rows('voice:turn').filter((row) => str(row.data, 'outcome') === 'failed');
  const voiceSignals = rows('voice_degraded');
  const voiceKinds = new Map<string, number>();
  for (const row of [...voiceTurns, ...voiceSignals])
    bump(voiceKinds, str(row.data, 'errorKind') ?? 'unknown');
  const voiceDegraded = voiceTurns.length + voiceSignals.length;
  if (voiceDegraded > 0)
    find(
      'voice_health',
      `${voiceDegraded} degraded voice turn(s); dominant errorKind ${topKey(voiceKinds)}`,
      voiceDegraded,
    );

  // Rule 8 and 9: pipeline authoring by capability class.
  const authorings = rows('pipeline:authored').filter((row) => str(row.data, 'excluded') === undefined);
  const cohort = (classes: string[]) =>
    authorings.filter((row) => classes.includes(str(row.data, 'capabilityClass') ?? 'unknown'));
  const smallNano = cohort(['small', 'nano']);
  if (smallNano.length > 0) {
    const invalid = smallNano.filter((row) => !bool(row.data, 'valid')).length;
    find(
      'pipeline_authoring',
      `${invalid} of ${smallNano.length} small or nano tier authorings invalid (rate ${ratio(invalid, smallNano.length)})`,
      invalid,
    );
  }
  const small = cohort(['small']);
  const frontier = cohort(['frontier']);
  const validity = (list: DiagnosticEvent[]) =>
    ratio(list.filter((row) => bool(row.data, 'valid')).length, list.length) * 100;
  let pipelineAuthoringGate: FleetHealthReport['pipelineAuthoringGate'];
  if (small.length === 0 && frontier.length === 0) {
    pipelineAuthoringGate = {
      buildAuthor: false,
      reason: 'insufficient telemetry: no small or frontier authorings in the window',
    };
  } else if (small.length < FLEET_THRESHOLDS.gateMinSmall) {
    pipelineAuthoringGate = {
      buildAuthor: false,
      reason: `insufficient telemetry: ${small.length} small-tier authorings, ${FLEET_THRESHOLDS.gateMinSmall} needed`,
    };
  } else if (frontier.length === 0) {
    pipelineAuthoringGate = {
      buildAuthor: false,
      reason: 'insufficient telemetry: no frontier authorings to compare with',
    };
  } else {
    const gap = Math.round((validity(frontier) - validity(small)) * 100) / 100;
    pipelineAuthoringGate =
      gap >= FLEET_THRESHOLDS.gateGapPoints
        ? {
            buildAuthor: true,
            reason: `small-tier validity trails frontier by ${gap} points over ${small.length} authorings`,
          }
        : {
            buildAuthor: false,
            reason: `small-tier validity trails frontier by ${gap} points, below ${FLEET_THRESHOLDS.gateGapPoints}`,
          };
  }

  // Rule 10.
  const runs = rows('orchestrate:run_summary');
  if (runs.length > 0) {
    const saved = runs.reduce((sum, row) => {
      const savings = row.data.savings;
      return (
        sum +
        (typeof savings === 'object' && savings !== null && !Array.isArray(savings)
          ? count(savings, 'estSavedTokens')
          : 0)
      );
    }, 0);
    find(
      'orchestrate_efficiency',
      `${runs.length} orchestrate run(s) saved about ${saved} tokens`,
      runs.length,
    );
  }

  if (evidence.cronWakeGate && evidence.cronWakeGate.fires.total > 0) {
    const gate = evidence.cronWakeGate.fires;
    find(
      'cron_wake_gate_efficiency',
      `${gate.total} gated fire(s): skip rate ${gate.skipRate}, fail-open rate ${gate.failOpenRate}`,
      gate.failedOpen,
    );
  }

  const sweeps = rows('learning:lifecycle_swept');
  if (sweeps.length > 0) {
    const moved = sweeps.reduce(
      (sum, row) =>
        sum + count(row.data, 'demoted') + count(row.data, 'evicted') + count(row.data, 'promoted'),
      0,
    );
    find('memory_lifecycle', `${sweeps.length} lifecycle sweep(s) moved ${moved} memories`, moved);
  }

  const signalCounts = new Map<string, number>();
  for (const row of evidence.diagnostics)
    if (HEALTH_SIGNALS.includes(row.category)) bump(signalCounts, row.category);
  for (const [signal, n] of Object.entries(sortedObject(signalCounts))) {
    if (n >= FLEET_THRESHOLDS.recurringSignal)
      find('fleet_recurring_health_signal', `${signal} seen ${n} times`, n);
  }

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
    sessions: { total: sessions.length, degraded: degraded.length, degradedRate },
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
    ...(evidence.cronWakeGate ? { cronWakeGate: evidence.cronWakeGate } : {}),
    suggestedNextSteps,
    truncations,
    coverage: evidence.coverage,
  };
  return report;
}
