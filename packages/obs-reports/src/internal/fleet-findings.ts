/** The findings of a FleetHealthReport, each from its part of the window's evidence. */
import type { DiagnosticEvent } from '../evidence-store.js';
import type { AutonomyBlock } from '@agentd/contracts';
import type { FleetEvidence, FleetHealthReport, Finding } from '../fleet-report.js';
import { bool, bump, count, ratio, sortedObject, str, topKey } from './values.js';

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

/** Health-signal categories counted for `fleet_recurring_health_signal`. */
const HEALTH_SIGNALS = ['voice_degraded', 'autonomy_denial_breaker', 'cron_wake_gate', 'pipeline_authoring'];

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
  fleet_autonomy_degradation:
    'sub-agent runs were orphaned or revoked; check subagent.list and the audit rows of kind lease',
  durable_orphaned:
    'runs cut off by a daemon stop after calling tools were not resumed; spawn them again if still needed',
  autonomy_revoked:
    'leases were revoked by an operator or run.kill; check obs.audit.query kind lease for why',
  autonomy_killed:
    'sub-agent runs were killed; check obs.audit.query kind lease and the runs with subagent.list',
  autonomy_denial_breaker:
    'a run tree kept calling tools outside its capability set; review its task and tool set',
};

/** Adds one finding (with its code's hint) to the report's list. */
export type Find = (code: string, detail: string, count: number) => void;

/** A finding list and the `find` that fills it. */
export function findingList(): { findings: Finding[]; find: Find } {
  const findings: Finding[] = [];
  return {
    findings,
    find: (code, detail, n) => findings.push({ code, detail, count: n, hint: HINTS[code] ?? '' }),
  };
}

/** The window's diagnostic rows of one category, oldest first. */
export type RowsOf = (category: string) => DiagnosticEvent[];

/** Sessions degraded too often (rate) and degraded at all (dominant cause). */
export function degradationFindings(
  find: Find,
  sessions: { total: number; degraded: Array<{ cause: string | undefined }> },
  degradedByCause: Map<string, number>,
): void {
  const { degraded } = sessions;
  const degradedRate = ratio(degraded.length, sessions.total);
  if (
    sessions.total >= FLEET_THRESHOLDS.highDegradedMinSessions &&
    degradedRate >= FLEET_THRESHOLDS.highDegradedRate
  ) {
    find(
      'fleet_high_degraded_rate',
      `${degraded.length} of ${sessions.total} sessions degraded (rate ${degradedRate})`,
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
}

/** Rule 7: the latest posture row only; malformed counts fold to 0. */
export function postureFindings(find: Find, rows: RowsOf): void {
  const posture = rows('config_posture').at(-1);
  if (!posture) return;
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

/** Rule 8: voice. */
export function voiceFindings(find: Find, rows: RowsOf): void {
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
}

/** Rule 8 and 9: pipeline authoring by capability class, and the gate on building an author. */
export function pipelineAuthoring(find: Find, rows: RowsOf): FleetHealthReport['pipelineAuthoringGate'] {
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
  if (small.length === 0 && frontier.length === 0) {
    return {
      buildAuthor: false,
      reason: 'insufficient telemetry: no small or frontier authorings in the window',
    };
  }
  if (small.length < FLEET_THRESHOLDS.gateMinSmall) {
    return {
      buildAuthor: false,
      reason: `insufficient telemetry: ${small.length} small-tier authorings, ${FLEET_THRESHOLDS.gateMinSmall} needed`,
    };
  }
  if (frontier.length === 0) {
    return {
      buildAuthor: false,
      reason: 'insufficient telemetry: no frontier authorings to compare with',
    };
  }
  const gap = Math.round((validity(frontier) - validity(small)) * 100) / 100;
  return gap >= FLEET_THRESHOLDS.gateGapPoints
    ? {
        buildAuthor: true,
        reason: `small-tier validity trails frontier by ${gap} points over ${small.length} authorings`,
      }
    : {
        buildAuthor: false,
        reason: `small-tier validity trails frontier by ${gap} points, below ${FLEET_THRESHOLDS.gateGapPoints}`,
      };
}

/** Rule 10, the cron wake gate and memory lifecycle: informational efficiency findings. */
export function efficiencyFindings(find: Find, rows: RowsOf, evidence: FleetEvidence): void {
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
}

/** Health signals seen at least `recurringSignal` times in the window. */
export function recurringSignalFindings(find: Find, diagnostics: DiagnosticEvent[]): void {
  const signalCounts = new Map<string, number>();
  for (const row of diagnostics) if (HEALTH_SIGNALS.includes(row.category)) bump(signalCounts, row.category);
  for (const [signal, n] of Object.entries(sortedObject(signalCounts))) {
    if (n >= FLEET_THRESHOLDS.recurringSignal)
      find('fleet_recurring_health_signal', `${signal} seen ${n} times`, n);
  }
}

/** The autonomy block's findings: degraded runs, orphaned, revoked, killed, denial-breaker trips. */
export function autonomyFindings(find: Find, autonomy: AutonomyBlock): void {
  const { runs, orphaned, revoked, killed, denialBreakerTrips } = autonomy;
  if (runs.degraded > 0) {
    find(
      'fleet_autonomy_degradation',
      `${runs.degraded} of ${runs.total} sub-agent runs degraded (${orphaned} orphaned, ${revoked} revoked)`,
      runs.degraded,
    );
  }
  if (orphaned > 0) find('durable_orphaned', `${orphaned} run(s) orphaned by a restart`, orphaned);
  if (revoked > 0) find('autonomy_revoked', `${revoked} run(s) with revoked leases`, revoked);
  if (killed > 0) find('autonomy_killed', `${killed} run(s) killed`, killed);
  if (denialBreakerTrips > 0) {
    find(
      'autonomy_denial_breaker',
      `${denialBreakerTrips} capability-denial breaker trip(s) ended run trees`,
      denialBreakerTrips,
    );
  }
}
