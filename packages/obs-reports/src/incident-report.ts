import type { FilesCoverage } from './fleet-report.js';
import { createHash } from 'node:crypto';
import type { ContextBudget, SessionIndexRecord, TrajectoryRecord } from '@agentd/evidence';
import type { DiagnosticEvent } from './evidence-store.js';
import {
  breakerEntries,
  costAndTiming,
  coverageBlock,
  learningBlock,
  offloadEntries,
  orchestrateEntry,
  outcomeOf,
  recallBlock,
  toolActivity,
  voiceBlock,
} from './internal/incident-blocks.js';
import { bool, compare, count, sortedObject, str, topKey } from './internal/values.js';

/** Version of the report shapes. */
export const REPORT_SCHEMA_VERSION = 1;
/** The serialized size `depth: summary` bounds an IncidentReport to (about 6 KB). */
export const SUMMARY_REPORT_BYTES = 6144;

/** Diagnostic categories a session's report reads (rows carrying the session's key). */
export const SESSION_CATEGORIES = [
  'memory:recalled',
  'memory:reranked',
  'voice:turn',
  'learning:observed',
  'orchestrate:run_summary',
  'tool:breaker',
  'offload:written',
  'terminal.drive_promoted',
  'terminal.session_evicted',
] as const;

/** A gated cron fire that ran in this session (from `cron_runs`). */
export interface CronWakeRow {
  jobId: string;
  ts: number;
  gateOutcome: 'wake' | 'failed-open';
  gateDurationMs: number;
  toolCalls: number;
}

/** Everything the report of one session is computed from. */
export interface SessionEvidence {
  sessionKey: string;
  /** The session's session-index records, oldest first. */
  index: SessionIndexRecord[];
  trajectory: { found: boolean; file: string; records: TrajectoryRecord[] };
  /** The session's diagnostic rows, oldest first. */
  diagnostics: DiagnosticEvent[];
  /** Gated cron fires that woke the model in this session, oldest first. */
  cronWakes: CronWakeRow[];
  /** Offload pointers (`diskPathRel`) whose file is no longer there; they count as unresolved. @default none */
  offloadsMissing?: ReadonlySet<string>;
}

/** Root cause with its next steps. */
export interface RootCause {
  code: string;
  detail: string;
  suggestedNextSteps: string[];
}

/** One entry of `truncations[]`: which array the bounding shortened. */
export interface Truncation {
  field: string;
  kept: number;
  dropped: number;
}

/** The result of `obs.explain`. Field order is the contract's. */
export interface IncidentReport {
  schemaVersion: 1;
  sessionKey: string | null;
  traceId: string | null;
  agentId: string | null;
  channel: string | null;
  outcome: { endReason: string; degraded: boolean; severity: 'info' | 'warning' | 'error' };
  cost: { costUsd: number; totalTokens: number; cacheReadRatio: number };
  timing: { durationMs: number; turnCount: number };
  toolStats: Record<string, { ok: number; failed: number; topErrorKind: string | null }>;
  failures: Array<{
    seq: number;
    toolName: string;
    errorKind: string;
    resultDigest: string;
    resultBytes: number;
    errorPreview: string | null;
  }>;
  breakerTimeline: Array<{ seq: number; event: string; toolName: string }>;
  offloads: Array<{ diskPathRel: string; bytes: number; resolved: boolean }>;
  contextBudget?: ContextBudget;
  recall?: {
    recalls: number;
    zeroHits: number;
    lastLanes: string[];
    lastFinalCount: number;
    rerankerAvailable: boolean;
    crossUserRecalls?: number;
    lastCrossUserCount?: number;
  };
  voice?: {
    provider: string;
    keyless: boolean;
    model?: string;
    durationMs?: number;
    costUsd?: number;
    source?: string;
    outcome: 'ok' | 'failed';
    errorKind?: string;
  };
  learning?: {
    outcomeResolved: boolean;
    outcome?: string;
    sources: string[];
    skillsUsed: number;
    skillFailures: number;
    synthesisAbstained: boolean;
    skillsPromoted?: number;
    skillsDemoted?: number;
    failuresAttributed?: number;
  };
  orchestrate?: Array<{
    runId: string;
    leaseId?: string;
    outcome: 'success' | 'failure';
    durationMs: number;
    exitCode: number;
    failureClass?: string;
    toolCalls: Array<{ tool: string; capability: string; decision: string; count: number }>;
    resultRefs: { count: number; bytes: number };
    savings?: { estSavedTokens: number; savedRatio: number };
  }>;
  cronWakeGate?: {
    jobId: string;
    wake: boolean;
    durationMs: number;
    toolCalls: number;
    estTurnsSaved: number;
  };
  summary: string;
  likelyRootCause: RootCause;
  suggestedNextSteps: string[];
  truncations: Truncation[];
  coverage?: {
    trajectory: { found: boolean; records: number };
    rollup: { present: boolean };
    offloads: { pointersResolved: number; pointersTotal: number };
    sources?: { session: string; trajectory: string };
    toolStats?: { reconciled: boolean; rollupSource: string; divergentTools: string[] };
    files?: FilesCoverage;
  };
}

/** How a report was asked for: the reference that named the session. */
export interface ReportReference {
  kind: 'sessionKey' | 'traceId' | 'rootRunId';
  value: string;
}

const NEXT_STEPS: Record<string, string[]> = {
  session_not_found: [
    'check the reference: obs.trace.search finds trace ids of the last two days',
    'list sessions with session.list',
  ],
  terminal_drive_opened_without_task: ['send the task text after opening a terminal drive'],
  terminal_drive_evicted: ['raise the terminal idle or wall-clock limit, or keep the drive producing output'],
  orchestrate_failed: [
    'read the failed run’s failureClass and exitCode; rerun the script with a larger budget if it timed out',
  ],
  completed_with_tool_errors: [
    'inspect failures[] for the failing tool and its errorKind',
    'check the tool’s input schema and its upstream service',
  ],
  tool_breaker_opened: ['the breaker opened on repeated failures; fix the tool before resuming the agent'],
  context_exhausted: [
    'compact the session (session.compact) or reset its conversation',
    'raise the context window or pick a model with a larger window',
  ],
  recall_miss: ['check that memories exist for this agent (memory.search) and that indexing ran'],
  prompt_timeout: ['raise timeouts.stallMs or timeouts.turnMs for the agent', 'check the provider’s latency'],
  output_starved: ['raise the model’s maximum output tokens or ask for shorter answers'],
  turn_error: ['check the provider error code in obs.trace.search rows and the daemon log'],
  max_steps: ['raise the agent’s maxSteps or simplify the task'],
  learned_skill_failing: ['demote or review the learned skill that keeps failing'],
  synthesis_abstained_low_capability: ['use a more capable model for skill synthesis'],
  outcome_unresolved: ['no failure evidence; confirm the outcome with the user'],
  healthy: [],
};

function rootCause(code: string, detail: string): RootCause {
  return { code, detail, suggestedNextSteps: NEXT_STEPS[code] ?? [] };
}

/** `sha256:` and 16 hex digits: the fingerprint that stands in for untrusted text. */
function fingerprint(text: string): string {
  return `sha256:${createHash('sha256').update(text).digest('hex').slice(0, 16)}`;
}

/** The report for a reference that resolves to no session: the `session_not_found` marker. */
export function buildSessionNotFoundReport(reference: ReportReference): IncidentReport {
  const cause = rootCause(
    'session_not_found',
    `no session found for ${reference.kind} ${JSON.stringify(reference.value)}`,
  );
  return {
    schemaVersion: REPORT_SCHEMA_VERSION,
    sessionKey: reference.kind === 'sessionKey' ? reference.value : null,
    traceId: reference.kind === 'traceId' ? reference.value : null,
    agentId: null,
    channel: null,
    outcome: { endReason: 'session_not_found', degraded: false, severity: 'warning' },
    cost: { costUsd: 0, totalTokens: 0, cacheReadRatio: 0 },
    timing: { durationMs: 0, turnCount: 0 },
    toolStats: {},
    failures: [],
    breakerTimeline: [],
    offloads: [],
    summary: `session_not_found: ${cause.detail}`,
    likelyRootCause: cause,
    suggestedNextSteps: cause.suggestedNextSteps,
    truncations: [],
  };
}

/** Options of {@link buildIncidentReport}. */
export interface IncidentReportOptions {
  /** `summary` bounds the report to about 6 KB; `full` relaxes the array caps. @default 'summary' */
  depth?: 'summary' | 'full';
}

const CAPS = {
  summary: { failures: 10, breakerTimeline: 10, offloads: 10, orchestrate: 5, toolStats: 20 },
  full: { failures: 500, breakerTimeline: 200, offloads: 200, orchestrate: 100, toolStats: 500 },
};

/**
 * Builds the IncidentReport of one session from its evidence. Pure: the same evidence gives
 * byte-identical JSON. Raw tool output never enters the report; error text collapses to a
 * fingerprint.
 */
export function buildIncidentReport(
  evidence: SessionEvidence,
  options: IncidentReportOptions = {},
): IncidentReport {
  const depth = options.depth ?? 'summary';
  const caps = CAPS[depth];
  const { index } = evidence;
  const trajectory = evidence.trajectory.records;
  const last = index.at(-1);
  const turnEnds = trajectory.filter((record) => record.type === 'turn_end');
  const outcome = outcomeOf(index, turnEnds);
  const { cost, timing } = costAndTiming(index, turnEnds);
  const tools = toolActivity(trajectory, evidence.diagnostics);

  const truncations: Truncation[] = [];
  const cap = <T>(field: string, items: T[], max: number): T[] => {
    if (items.length <= max) return items;
    truncations.push({ field, kept: max, dropped: items.length - max });
    return items.slice(0, max);
  };

  const toolEntries = [...tools.perTool.entries()].sort(
    ([nameA, a], [nameB, b]) =>
      b.failed - a.failed || b.ok + b.failed - (a.ok + a.failed) || compare(nameA, nameB),
  );
  const toolStats = sortedObject(
    new Map(
      cap('toolStats', toolEntries, caps.toolStats).map(([name, entry]) => [
        name,
        { ok: entry.ok, failed: entry.failed, topErrorKind: topKey(entry.kinds) },
      ]),
    ),
  );
  const failures: IncidentReport['failures'] = cap('failures', tools.failedCalls, caps.failures).map(
    ({ seq, record }) => ({
      seq,
      toolName: record.toolName,
      errorKind: record.errorKind ?? 'tool_error',
      resultDigest: record.resultDigest,
      resultBytes: record.resultBytes,
      errorPreview: record.errorPreview === undefined ? null : fingerprint(record.errorPreview),
    }),
  );

  const rows = (category: string) => evidence.diagnostics.filter((row) => row.category === category);
  const breakerTimeline = cap(
    'breakerTimeline',
    breakerEntries(rows('tool:breaker'), tools.seqOfCall),
    caps.breakerTimeline,
  );
  const offloadRows = offloadEntries(rows('offload:written'), evidence.offloadsMissing);
  const offloads = cap('offloads', [...offloadRows].reverse(), caps.offloads);

  // contextBudget: only for context_exhausted sessions with budget records; the last one wins.
  const lastBudget = trajectory.filter((record) => record.type === 'context_budget').at(-1);
  const contextBudget =
    outcome.endReason === 'context_exhausted' && lastBudget ? lastBudget.budget : undefined;
  const recall = recallBlock(index, rows('memory:recalled'), rows('memory:reranked'));
  const voiceRow = rows('voice:turn').at(-1);
  const learningRow = rows('learning:observed').at(-1);
  const runs = rows('orchestrate:run_summary');
  const orchestrate =
    runs.length > 0
      ? cap('orchestrate', runs.map((row) => orchestrateEntry(row.data)).reverse(), caps.orchestrate)
      : undefined;
  const wake = evidence.cronWakes.at(-1);

  // Built in the contract's key order, so the JSON is stable; the cause and summary come last.
  const report: IncidentReport = {
    schemaVersion: REPORT_SCHEMA_VERSION,
    sessionKey: evidence.sessionKey,
    traceId: last?.traceId ?? trajectory.at(-1)?.traceId ?? null,
    agentId: last?.agentId ?? trajectory.at(-1)?.agentId ?? null,
    channel: last?.channelType ?? null,
    outcome,
    cost,
    timing,
    toolStats,
    failures,
    breakerTimeline,
    offloads,
    ...(contextBudget ? { contextBudget } : {}),
    ...(recall ? { recall } : {}),
    ...(voiceRow ? { voice: voiceBlock(voiceRow.data) } : {}),
    ...(learningRow ? { learning: learningBlock(learningRow.data) } : {}),
    ...(orchestrate ? { orchestrate } : {}),
    ...(wake
      ? {
          cronWakeGate: {
            jobId: wake.jobId,
            wake: true,
            durationMs: wake.gateDurationMs,
            toolCalls: wake.toolCalls,
            estTurnsSaved: 0,
          },
        }
      : {}),
    summary: '',
    likelyRootCause: rootCause('healthy', ''),
    suggestedNextSteps: [],
    truncations,
    coverage: coverageBlock(evidence, tools.perTool, offloadRows),
  };

  report.likelyRootCause = rankRootCause(report, evidence);
  report.suggestedNextSteps = [...report.likelyRootCause.suggestedNextSteps];
  if (!evidence.trajectory.found)
    report.suggestedNextSteps.push('the trajectory file is missing; tool evidence is incomplete');
  report.summary = summarize(report);

  if (depth === 'summary') boundToSummary(report);
  return report;
}

function rankRootCause(report: IncidentReport, evidence: SessionEvidence): RootCause {
  const rows = (category: string) => evidence.diagnostics.filter((row) => row.category === category);
  const drives = rows('terminal.drive_promoted');
  if (drives.some((row) => !bool(row.data, 'taskSent', true))) {
    return rootCause(
      'terminal_drive_opened_without_task',
      'a terminal drive was created but no task text was sent',
    );
  }
  const eviction = rows('terminal.session_evicted').find((row) =>
    ['idle', 'wall_clock'].includes(str(row.data, 'reason') ?? ''),
  );
  if (eviction) {
    return rootCause(
      'terminal_drive_evicted',
      `terminal drive evicted (reason ${str(eviction.data, 'reason')}, idleMs ${count(eviction.data, 'idleMs')}, wasProducing ${bool(eviction.data, 'wasProducing')})`,
    );
  }
  const failedRun = report.orchestrate?.find((run) => run.outcome === 'failure');
  if (failedRun) {
    return rootCause(
      'orchestrate_failed',
      `orchestrate run ${failedRun.runId} failed (${failedRun.failureClass}, exit ${failedRun.exitCode})`,
    );
  }
  const failed = Object.entries(report.toolStats).filter(([, stats]) => stats.failed > 0);
  if (failed.length > 0) {
    const [name, stats] = failed.sort(([a, x], [b, y]) => y.failed - x.failed || compare(a, b))[0] as [
      string,
      IncidentReport['toolStats'][string],
    ];
    const total = failed.reduce((sum, [, entry]) => sum + entry.failed, 0);
    return rootCause(
      'completed_with_tool_errors',
      `${total} tool call(s) failed; most: ${name} (${stats.failed}, ${stats.topErrorKind ?? 'tool_error'})`,
    );
  }
  if (report.breakerTimeline.length > 0) {
    const first = report.breakerTimeline.at(-1) as IncidentReport['breakerTimeline'][number];
    return rootCause('tool_breaker_opened', `breaker ${first.event} on ${first.toolName}`);
  }
  const { endReason, degraded } = report.outcome;
  if (degraded && endReason === 'context_exhausted') {
    return rootCause(
      'context_exhausted',
      `the context-window guard aborted the run (verdict ${report.contextBudget?.verdict ?? 'unknown'})`,
    );
  }
  if (
    degraded &&
    report.recall &&
    report.recall.recalls > 0 &&
    report.recall.zeroHits === report.recall.recalls
  ) {
    return rootCause('recall_miss', `all ${report.recall.recalls} recall(s) returned no memory`);
  }
  if (degraded && endReason === 'timeout')
    return rootCause('prompt_timeout', 'the stall budget or the turn ceiling killed the turn');
  if (degraded && endReason === 'output_starved')
    return rootCause('output_starved', 'the reply was cut at the model’s maximum output tokens');
  if (degraded && endReason === 'max_steps') return rootCause('max_steps', 'the turn ran out of model steps');
  if (degraded) {
    const code = [...evidence.index].reverse().find((record) => record.errorCode)?.errorCode;
    return rootCause('turn_error', `the turn ended ${endReason}${code ? ` (${code})` : ''}`);
  }
  if (report.learning && report.learning.skillFailures > 0) {
    return rootCause('learned_skill_failing', `${report.learning.skillFailures} learned skill use(s) failed`);
  }
  if (report.learning?.synthesisAbstained) {
    return rootCause(
      'synthesis_abstained_low_capability',
      'skill synthesis abstained on a low-capability model',
    );
  }
  if (report.learning && !report.learning.outcomeResolved) {
    return rootCause('outcome_unresolved', 'the turn’s outcome was never resolved');
  }
  return rootCause('healthy', 'no failure evidence');
}

function summarize(report: IncidentReport): string {
  const failedCalls = Object.values(report.toolStats).reduce((sum, stats) => sum + stats.failed, 0);
  return [
    `${report.timing.turnCount} turn(s)`,
    `ended ${report.outcome.endReason}${report.outcome.degraded ? ` (degraded, ${report.outcome.severity})` : ''}`,
    `${failedCalls} failed tool call(s)`,
    `likely cause ${report.likelyRootCause.code}`,
  ].join('; ');
}

const size = (report: IncidentReport) => Buffer.byteLength(JSON.stringify(report));

/** Halves the arrays, longest first, until the report fits the summary bound. */
function boundToSummary(report: IncidentReport): void {
  const shrinkable: Array<'failures' | 'breakerTimeline' | 'offloads' | 'orchestrate'> = [
    'failures',
    'breakerTimeline',
    'offloads',
    'orchestrate',
  ];
  for (let round = 0; round < 32 && size(report) > SUMMARY_REPORT_BYTES; round += 1) {
    const field = shrinkable
      .filter((name) => (report[name]?.length ?? 0) > 0)
      .sort((a, b) => (report[b]?.length ?? 0) - (report[a]?.length ?? 0))[0];
    if (field === undefined) break;
    const items = report[field] as unknown[];
    const keep = Math.floor(items.length / 2);
    note(report, field, items.length - keep);
    (report as unknown as Record<string, unknown[]>)[field] = items.slice(0, keep);
  }
  // Tool stats go last: keep the tools with the most failures.
  const tools = Object.keys(report.toolStats);
  let keepTools = tools.length;
  while (size(report) > SUMMARY_REPORT_BYTES && keepTools > 1) {
    keepTools = Math.floor(keepTools / 2);
    const kept = Object.entries(report.toolStats)
      .sort(([a, x], [b, y]) => y.failed - x.failed || compare(a, b))
      .slice(0, keepTools);
    note(report, 'toolStats', Object.keys(report.toolStats).length - kept.length);
    report.toolStats = Object.fromEntries(kept.sort(([a], [b]) => compare(a, b)));
  }
}

function note(report: IncidentReport, field: string, dropped: number): void {
  const existing = report.truncations.find((entry) => entry.field === field);
  if (existing) {
    existing.dropped += dropped;
    existing.kept -= dropped;
  } else {
    const kept =
      field === 'toolStats'
        ? Object.keys(report.toolStats).length - dropped
        : ((report as unknown as Record<string, unknown[]>)[field]?.length ?? 0) - dropped;
    report.truncations.push({ field, kept, dropped });
  }
}
