import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { diag, fleetCorpus, incidentCorpus, PLANTED_OUTPUT, PLANTED_SECRET } from '../test/fixtures.js';
import { matchGolden } from '../test/golden.js';
import { buildFleetHealthReport } from './fleet-report.js';
import {
  buildIncidentReport,
  buildSessionNotFoundReport,
  type SessionEvidence,
  SUMMARY_REPORT_BYTES,
} from './incident-report.js';

const GOLDEN = join(import.meta.dirname, '..', 'test', 'golden');

// Regenerate with UPDATE_GOLDEN=1 after an intended change, then review the diff.
function golden(name: string, value: unknown): void {
  matchGolden(join(GOLDEN, `${name}.json`), value);
}

const CONTRACT_ORDER = [
  'schemaVersion',
  'sessionKey',
  'traceId',
  'agentId',
  'channel',
  'outcome',
  'cost',
  'timing',
  'toolStats',
  'failures',
  'breakerTimeline',
  'offloads',
  'contextBudget',
  'recall',
  'voice',
  'learning',
  'orchestrate',
  'cronWakeGate',
  'summary',
  'likelyRootCause',
  'suggestedNextSteps',
  'truncations',
  'coverage',
];

describe('buildIncidentReport', () => {
  for (const [name, evidence] of Object.entries(incidentCorpus())) {
    it(`matches the golden report for ${name}`, () => {
      golden(`incident-${name}`, buildIncidentReport(evidence));
    });
  }

  it('names the root cause each fixture was built for', () => {
    const corpus = incidentCorpus();
    const codes = Object.fromEntries(
      Object.entries(corpus).map(([name, evidence]) => [
        name,
        buildIncidentReport(evidence).likelyRootCause.code,
      ]),
    );
    expect(codes).toMatchObject({
      completed: 'healthy',
      completed_with_tool_errors: 'completed_with_tool_errors',
      context_exhausted: 'context_exhausted',
      prompt_timeout: 'prompt_timeout',
      output_starved: 'output_starved',
      recall_miss: 'recall_miss',
      recall_miss_session_index: 'recall_miss',
      breaker_opened: 'completed_with_tool_errors',
      orchestrate_failed: 'orchestrate_failed',
      terminal_drive_opened_without_task: 'terminal_drive_opened_without_task',
      terminal_drive_evicted: 'terminal_drive_evicted',
      learned_skill_failing: 'learned_skill_failing',
      synthesis_abstained_low_capability: 'synthesis_abstained_low_capability',
      outcome_unresolved: 'outcome_unresolved',
    });
  });

  it('keeps the contract key order and adds optional blocks only when their condition holds', () => {
    const corpus = incidentCorpus();
    for (const evidence of Object.values(corpus)) {
      const keys = Object.keys(buildIncidentReport(evidence));
      expect(keys).toEqual(CONTRACT_ORDER.filter((key) => keys.includes(key)));
    }
    expect(buildIncidentReport(corpus.context_exhausted as never).contextBudget?.verdict).toBe('exhausted');
    // Budget records exist but the session did not end context_exhausted: no block.
    expect(buildIncidentReport(corpus.completed as never).contextBudget).toBeUndefined();
    expect(buildIncidentReport(corpus.completed as never).recall).toBeUndefined();
    expect(buildIncidentReport(corpus.recall_miss as never).recall).toMatchObject({
      recalls: 2,
      zeroHits: 2,
      rerankerAvailable: false,
    });
    expect(buildIncidentReport(corpus.recall_miss as never).recall).not.toHaveProperty('crossUserRecalls');
    expect(buildIncidentReport(corpus.cron_woken as never).cronWakeGate).toEqual({
      jobId: 'job-1',
      wake: true,
      durationMs: 40,
      toolCalls: 2,
      estTurnsSaved: 0,
    });
    expect(
      buildIncidentReport(corpus.orchestrate_failed as never).orchestrate?.map((run) => run.outcome),
    ).toEqual(['failure', 'success']);
  });

  it('reads the automatic recalls of the session index into the recall block', () => {
    const report = buildIncidentReport(incidentCorpus().recall_miss_session_index as never);
    expect(report.recall).toEqual({
      recalls: 2,
      zeroHits: 2,
      lastLanes: ['fts', 'vector'],
      lastFinalCount: 0,
      // The first turn reranked; the last recall did not run the reranker, so its latest observation stands.
      rerankerAvailable: true,
    });
  });

  it('places a breaker transition at the session-wide seq of the call that caused it', () => {
    const report = buildIncidentReport(incidentCorpus().breaker_opened as never);
    // Turn 2's per-turn seq 2 is the session's third call (turn 1 made one call).
    expect(report.breakerTimeline).toEqual([{ seq: 3, event: 'opened', toolName: 'fetch' }]);
    expect(report.failures.map((failure) => failure.seq)).toEqual([4, 3, 2]);
    expect(report.offloads).toEqual([
      { diskPathRel: 'obs/offloads/s-breaker/1.json', bytes: 90000, resolved: true },
    ]);
    // A pointer whose file is gone counts as unresolved.
    const gone = buildIncidentReport({
      ...(incidentCorpus().breaker_opened as SessionEvidence),
      offloadsMissing: new Set(['obs/offloads/s-breaker/1.json']),
    });
    expect(gone.offloads[0]?.resolved).toBe(false);
    expect(gone.coverage?.offloads).toEqual({ pointersResolved: 0, pointersTotal: 1 });
  });

  it('fills the autonomy block and its findings from the run figures and run-session breaker trips', () => {
    const corpus = fleetCorpus();
    const report = buildFleetHealthReport({
      ...corpus,
      diagnostics: [
        ...corpus.diagnostics,
        diag('tool:breaker', { event: 'opened', toolName: 'fetch' }, 'default:subagent:r2'),
        diag('tool:breaker', { event: 'closed', toolName: 'fetch' }, 'default:subagent:r2'),
      ],
      autonomy: {
        runs: { total: 6, degraded: 3, degradedRate: 0.5 },
        orphaned: 1,
        resumed: 2,
        revoked: 2,
        killed: 1,
        denialBreakerTrips: 1,
        budgetBreaches: 1,
        costUsd: 0.25,
        worstRootRunId: 'r1',
      },
    });
    expect(report.autonomy).toEqual({
      runs: { total: 6, degraded: 3, degradedRate: 0.5 },
      orphaned: 1,
      resumed: 2,
      revoked: 2,
      killed: 1,
      breakerTrips: 1,
      denialBreakerTrips: 1,
      budgetBreaches: 1,
      costUsd: 0.25,
      worstRootRunId: 'r1',
    });
    const codes = report.findings.map((finding) => finding.code);
    for (const code of [
      'fleet_autonomy_degradation',
      'durable_orphaned',
      'autonomy_revoked',
      'autonomy_killed',
      'autonomy_denial_breaker',
    ]) {
      expect(codes).toContain(code);
    }
    expect(report.likelyRootCause.code).toBe('fleet_autonomy_degradation');
    // Between pipelineAuthoringGate and cronWakeGate, as the contract orders the blocks.
    const keys = Object.keys(report);
    expect(keys.indexOf('autonomy')).toBe(keys.indexOf('pipelineAuthoringGate') + 1);
    expect(buildFleetHealthReport(corpus).autonomy).toBeUndefined();
  });

  it('gives byte-identical JSON for the same evidence', () => {
    const first = Object.values(incidentCorpus()).map((evidence) =>
      JSON.stringify(buildIncidentReport(evidence)),
    );
    const second = Object.values(incidentCorpus()).map((evidence) =>
      JSON.stringify(buildIncidentReport(evidence)),
    );
    expect(second).toEqual(first);
  });

  it('bounds a summary report to about 6 KB and records what it dropped', () => {
    const evidence = incidentCorpus().many_failures as never;
    const summary = buildIncidentReport(evidence);
    expect(Buffer.byteLength(JSON.stringify(summary))).toBeLessThanOrEqual(SUMMARY_REPORT_BYTES);
    expect(summary.truncations.find((entry) => entry.field === 'failures')).toMatchObject({ dropped: 20 });
    const full = buildIncidentReport(evidence, { depth: 'full' });
    expect(full.failures).toHaveLength(30);
    expect(full.failures[0]?.seq).toBeGreaterThan(full.failures[1]?.seq ?? 0);
  });

  it('reconciles the rollup with the trajectory per rule 4', () => {
    const report = buildIncidentReport(incidentCorpus().many_failures as never);
    // The rollup claims 40 ok / 30 failed; the trajectory holds 30 / 30: the rollup over-counts.
    expect(report.coverage?.toolStats).toEqual({
      reconciled: false,
      rollupSource: 'session-index',
      divergentTools: ['*'],
    });
    expect(
      buildIncidentReport(incidentCorpus().completed_with_tool_errors as never).coverage?.toolStats
        ?.reconciled,
    ).toBe(true);
  });

  it('never contains a planted secret or raw tool output', () => {
    for (const evidence of Object.values(incidentCorpus())) {
      for (const depth of ['summary', 'full'] as const) {
        const text = JSON.stringify(buildIncidentReport(evidence, { depth }));
        expect(text).not.toContain(PLANTED_SECRET);
        expect(text).not.toContain('RAW TOOL OUTPUT');
        expect(text).not.toContain(PLANTED_OUTPUT.slice(-19));
      }
    }
  });
});

describe('buildSessionNotFoundReport', () => {
  it('names the reference that missed', () => {
    const report = buildSessionNotFoundReport({ kind: 'traceId', value: 'trace-404' });
    expect(report.likelyRootCause.code).toBe('session_not_found');
    expect(report.likelyRootCause.detail).toContain('trace-404');
    golden('incident-session_not_found', report);
  });
});

describe('buildFleetHealthReport', () => {
  it('matches the golden fleet report', () => {
    golden('fleet-findings', buildFleetHealthReport(fleetCorpus()));
  });

  it('computes every finding the evidence supports and ranks the root cause by rule 6', () => {
    const report = buildFleetHealthReport(fleetCorpus());
    expect(report.findings.map((finding) => finding.code)).toEqual([
      'fleet_high_degraded_rate',
      'fleet_acute_degradation',
      'fleet_config_posture',
      'fleet_recurring_health_signal',
      'config_posture:served_below_configured',
      'cron_wake_gate_efficiency',
      'memory_lifecycle',
      'orchestrate_efficiency',
      'pipeline_authoring',
      'voice_health',
    ]);
    expect(report.likelyRootCause.code).toBe('fleet_high_degraded_rate');
    expect(report.sessions).toEqual({ total: 10, degraded: 4, degradedRate: 0.4 });
    expect(report.degradedByCause).toEqual({ context_exhausted: 1, timeout: 3 });
    // Rule 7: only the latest posture row; its malformed skills count folds to 0.
    expect(
      report.findings.find((finding) => finding.code === 'config_posture:imported_skills'),
    ).toBeUndefined();
    // Rule 9: 20 small authorings at 50% validity vs 100% frontier: build.
    expect(report.pipelineAuthoringGate?.buildAuthor).toBe(true);
  });

  it('says insufficient telemetry and no build without authorings', () => {
    const evidence = { ...fleetCorpus(), diagnostics: [] };
    const report = buildFleetHealthReport(evidence);
    expect(report.pipelineAuthoringGate).toEqual({
      buildAuthor: false,
      reason: expect.stringContaining('insufficient telemetry'),
    });
    expect(report.findings.map((finding) => finding.code)).not.toContain('pipeline_authoring');
  });

  it('gives byte-identical JSON for the same evidence', () => {
    expect(JSON.stringify(buildFleetHealthReport(fleetCorpus()))).toBe(
      JSON.stringify(buildFleetHealthReport(fleetCorpus())),
    );
  });
});
