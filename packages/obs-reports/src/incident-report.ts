import { createHash } from 'node:crypto';
import type { ContextBudget, SessionIndexRecord, TrajectoryRecord } from '@agentd/evidence';
import type { DiagnosticEvent } from './evidence-store.js';
import {
  bool,
  bump,
  count,
  num,
  obj,
  ratio,
  sortedObject,
  str,
  strings,
  topKey,
  usd,
} from './internal/values.js';

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
  };
}

/** How a report was asked for: the reference that named the session. */
export interface ReportReference {
  kind: 'sessionKey' | 'traceId' | 'rootRunId';
  value: string;
}

const SEVERITY_RANK = { info: 0, warning: 1, error: 2 } as const;

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

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
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
  const { index } = evidence;
  const trajectory = evidence.trajectory.records;
  const last = index.at(-1);
  const turnEnds = trajectory.filter((record) => record.type === 'turn_end');

  // Outcome: the last degraded turn names the cause; severity is the worst seen.
  const outcomes =
    index.length > 0
      ? index.map((record) => record.outcome)
      : turnEnds.map((record) => ({
          endReason: record.endReason,
          degraded: record.endReason !== 'completed' && record.endReason !== 'cancelled',
          severity: 'info' as const,
        }));
  const lastDegraded = [...outcomes].reverse().find((outcome) => outcome.degraded);
  const severity = outcomes.reduce<'info' | 'warning' | 'error'>(
    (worst, outcome) => (SEVERITY_RANK[outcome.severity] > SEVERITY_RANK[worst] ? outcome.severity : worst),
    'info',
  );
  const outcome = {
    endReason: lastDegraded?.endReason ?? outcomes.at(-1)?.endReason ?? 'unknown',
    degraded: lastDegraded !== undefined,
    severity,
  };

  // Cost and timing come from the session index (one line per turn), else from turn_end records.
  const turns =
    index.length > 0
      ? index.map((record) => ({
          costUsd: record.costUsd,
          tokens: record.tokens,
          durationMs: record.durationMs,
        }))
      : turnEnds.map((record) => ({
          costUsd: record.costUsd,
          tokens: record.tokens,
          durationMs: record.durationMs,
        }));
  const input = turns.reduce((sum, turn) => sum + turn.tokens.input, 0);
  const cacheRead = turns.reduce((sum, turn) => sum + turn.tokens.cacheRead, 0);
  const cost = {
    costUsd: usd(turns.reduce((sum, turn) => sum + turn.costUsd, 0)),
    totalTokens: turns.reduce((sum, turn) => sum + turn.tokens.total, 0),
    cacheReadRatio: ratio(cacheRead, input),
  };
  const timing = {
    durationMs: Math.round(turns.reduce((sum, turn) => sum + turn.durationMs, 0)),
    turnCount: turns.length,
  };

  // Tool stats and failures from the trajectory (provenance only).
  const perTool = new Map<string, { ok: number; failed: number; kinds: Map<string, number> }>();
  // Failed calls with their session-wide seq; the error text is fingerprinted only for those kept.
  const failedCalls: Array<{ seq: number; record: Extract<TrajectoryRecord, { type: 'tool_call' }> }> = [];
  let callSeq = 0;
  // Tool call id (per turn trace) to the session-wide seq, for breaker rows that name their call;
  // built only when the session has breaker rows (a long trajectory would pay for nothing).
  const breakerCalls = new Set<string>();
  for (const row of evidence.diagnostics) {
    if (row.category === 'tool:breaker' && typeof row.data.toolCallId === 'string')
      breakerCalls.add(`${str(row.data, 'traceId')}\u0000${row.data.toolCallId}`);
  }
  const seqOfCall = new Map<string, number>();
  for (const record of trajectory) {
    if (record.type !== 'tool_call') continue;
    callSeq += 1;
    if (breakerCalls.size > 0) {
      const call = `${record.traceId}\u0000${record.toolCallId}`;
      if (breakerCalls.has(call)) seqOfCall.set(call, callSeq);
    }
    const entry = perTool.get(record.toolName) ?? { ok: 0, failed: 0, kinds: new Map<string, number>() };
    perTool.set(record.toolName, entry);
    if (record.ok) {
      entry.ok += 1;
      continue;
    }
    entry.failed += 1;
    const kind = record.errorKind ?? 'tool_error';
    bump(entry.kinds, kind);
    // Session-wide order, so seq is unique across turns (the record's seq restarts per turn).
    failedCalls.push({ seq: callSeq, record });
  }
  failedCalls.reverse();
  const caps = CAPS[depth];
  const truncations: Truncation[] = [];
  const cap = <T>(field: string, items: T[], max: number): T[] => {
    if (items.length <= max) return items;
    truncations.push({ field, kept: max, dropped: items.length - max });
    return items.slice(0, max);
  };

  const toolEntries = [...perTool.entries()].sort(
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
  const failures: IncidentReport['failures'] = cap('failures', failedCalls, caps.failures).map(
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
  const breakerAll = rows('tool:breaker')
    .map((row) => ({
      // The runtime's seq restarts per turn; the call's session-wide seq matches failures[].seq.
      seq:
        seqOfCall.get(`${str(row.data, 'traceId')}\u0000${str(row.data, 'toolCallId')}`) ??
        count(row.data, 'seq'),
      event: str(row.data, 'event') ?? 'opened',
      toolName: str(row.data, 'toolName') ?? 'unknown',
    }))
    .reverse();
  const breakerTimeline = cap('breakerTimeline', breakerAll, caps.breakerTimeline);
  const offloadRows = rows('offload:written').map((row) => {
    const diskPathRel = str(row.data, 'diskPathRel') ?? 'unknown';
    return {
      diskPathRel,
      bytes: count(row.data, 'bytes'),
      resolved: bool(row.data, 'resolved', true) && !evidence.offloadsMissing?.has(diskPathRel),
    };
  });
  const offloads = cap('offloads', [...offloadRows].reverse(), caps.offloads);

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
    summary: '',
    likelyRootCause: rootCause('healthy', ''),
    suggestedNextSteps: [],
    truncations,
  };

  // contextBudget: only for context_exhausted sessions with budget records; the last one wins.
  const budgets = trajectory.filter((record) => record.type === 'context_budget');
  const lastBudget = budgets.at(-1);
  if (outcome.endReason === 'context_exhausted' && lastBudget) report.contextBudget = lastBudget.budget;

  const recall = recallBlock(evidence.index, rows('memory:recalled'), rows('memory:reranked'));
  if (recall) report.recall = recall;

  const voiceRow = rows('voice:turn').at(-1);
  if (voiceRow) {
    const data = voiceRow.data;
    const keyless = bool(data, 'keyless');
    const failed = str(data, 'outcome') === 'failed';
    report.voice = {
      provider: str(data, 'provider') ?? 'unknown',
      keyless,
      ...(str(data, 'model') ? { model: str(data, 'model') as string } : {}),
      ...(typeof data.durationMs === 'number' ? { durationMs: num(data, 'durationMs') } : {}),
      // A keyless turn costs nothing; a keyed turn's cost is not attributed here.
      ...(keyless ? { costUsd: 0 } : {}),
      ...(str(data, 'source') ? { source: str(data, 'source') as string } : {}),
      outcome: failed ? 'failed' : 'ok',
      ...(failed && str(data, 'errorKind') ? { errorKind: str(data, 'errorKind') as string } : {}),
    };
  }

  const learningRow = rows('learning:observed').at(-1);
  if (learningRow) {
    const data = learningRow.data;
    const optionalCount = (key: string) => (typeof data[key] === 'number' ? { [key]: count(data, key) } : {});
    report.learning = {
      outcomeResolved: bool(data, 'outcomeResolved'),
      ...(str(data, 'outcome') ? { outcome: str(data, 'outcome') as string } : {}),
      sources: [...new Set(strings(data, 'sources'))].sort(),
      skillsUsed: count(data, 'skillsUsed'),
      skillFailures: count(data, 'skillFailures'),
      synthesisAbstained: bool(data, 'synthesisAbstained'),
      ...optionalCount('skillsPromoted'),
      ...optionalCount('skillsDemoted'),
      ...optionalCount('failuresAttributed'),
    };
  }

  const runs = rows('orchestrate:run_summary');
  if (runs.length > 0) {
    const entries = runs.map((row) => {
      const data = row.data;
      const exitCode = num(data, 'exitCode', -1);
      const refs = obj(data, 'resultRefs');
      const savings = obj(data, 'savings');
      const calls = Array.isArray(data.toolCalls) ? data.toolCalls : [];
      return {
        runId: str(data, 'runId') ?? 'unknown',
        ...(str(data, 'leaseId') ? { leaseId: str(data, 'leaseId') as string } : {}),
        outcome: exitCode === 0 ? ('success' as const) : ('failure' as const),
        durationMs: count(data, 'durationMs'),
        exitCode,
        ...(exitCode !== 0 ? { failureClass: str(data, 'failureClass') ?? 'nonzero_exit' } : {}),
        toolCalls: calls.flatMap((call) =>
          typeof call === 'object' && call !== null && !Array.isArray(call)
            ? [
                {
                  tool: str(call, 'tool') ?? 'unknown',
                  capability: str(call, 'capability') ?? 'unknown',
                  decision: str(call, 'decision') ?? 'unknown',
                  count: count(call, 'count'),
                },
              ]
            : [],
        ),
        resultRefs: { count: count(refs, 'count'), bytes: count(refs, 'bytes') },
        ...(typeof savings.estSavedTokens === 'number'
          ? {
              savings: {
                estSavedTokens: count(savings, 'estSavedTokens'),
                savedRatio: num(savings, 'savedRatio'),
              },
            }
          : {}),
      };
    });
    report.orchestrate = cap('orchestrate', entries.reverse(), caps.orchestrate);
  }

  const wake = evidence.cronWakes.at(-1);
  if (wake) {
    report.cronWakeGate = {
      jobId: wake.jobId,
      wake: true,
      durationMs: wake.gateDurationMs,
      toolCalls: wake.toolCalls,
      estTurnsSaved: 0,
    };
  }

  report.likelyRootCause = rankRootCause(report, evidence);
  report.suggestedNextSteps = [...report.likelyRootCause.suggestedNextSteps];
  if (!evidence.trajectory.found)
    report.suggestedNextSteps.push('the trajectory file is missing; tool evidence is incomplete');
  report.summary = summarize(report);

  // Rule 4: the session-index rollup is a subset of the trajectory.
  const rollupOk = index.reduce((sum, record) => sum + record.toolCalls.ok, 0);
  const rollupFailed = index.reduce((sum, record) => sum + record.toolCalls.failed, 0);
  const trajOk = [...perTool.values()].reduce((sum, entry) => sum + entry.ok, 0);
  const trajFailed = [...perTool.values()].reduce((sum, entry) => sum + entry.failed, 0);
  const divergent = rollupOk !== trajOk || rollupFailed !== trajFailed;
  report.coverage = {
    trajectory: { found: evidence.trajectory.found, records: trajectory.length },
    rollup: { present: index.length > 0 },
    offloads: {
      pointersResolved: offloadRows.filter((row) => row.resolved).length,
      pointersTotal: offloadRows.length,
    },
    sources: { session: 'agentd.db#agent_messages', trajectory: evidence.trajectory.file },
    toolStats: {
      reconciled: rollupOk <= trajOk && rollupFailed <= trajFailed,
      rollupSource: 'session-index',
      // The rollup is per session, not per tool: a divergence is reported under `*`.
      divergentTools: index.length > 0 && divergent ? ['*'] : [],
    },
  };

  if (depth === 'summary') boundToSummary(report);
  return orderReport(report);
}

/** One recall observation, from a session-index line or a `memory:recalled` row. */
interface RecallSeen {
  ts: number;
  finalCount: number;
  lanes: string[];
  crossUserCount: number;
}

/**
 * The `recall` block: the runtime's automatic recalls (the `recall` of session-index lines)
 * and `memory:recalled` rows that name the session, in time order; the reranker is available
 * when its latest observation (a `memory:reranked` row or a reranked recall) did not fall back.
 */
function recallBlock(
  index: SessionIndexRecord[],
  recalledRows: DiagnosticEvent[],
  rerankedRows: DiagnosticEvent[],
): IncidentReport['recall'] | undefined {
  const seen: RecallSeen[] = [];
  const rerankers: Array<{ ts: number; available: boolean }> = [];
  for (const record of index) {
    if (!record.recall) continue;
    seen.push({
      ts: record.ts,
      finalCount: record.recall.finalCount,
      lanes: [...record.recall.lanes],
      crossUserCount: 0,
    });
    if (record.recall.reranked || record.recall.rerankFellBack)
      rerankers.push({ ts: record.ts, available: record.recall.reranked && !record.recall.rerankFellBack });
  }
  for (const row of recalledRows) {
    seen.push({
      ts: row.ts,
      finalCount: count(row.data, 'finalCount'),
      lanes: strings(row.data, 'lanes'),
      crossUserCount: count(row.data, 'crossUserCount'),
    });
  }
  for (const row of rerankedRows) rerankers.push({ ts: row.ts, available: !bool(row.data, 'fellBack') });
  if (seen.length === 0) return undefined;
  // Stable sort: at equal times the session-index line comes before the event rows.
  seen.sort((a, b) => a.ts - b.ts);
  rerankers.sort((a, b) => a.ts - b.ts);
  const last = seen.at(-1) as RecallSeen;
  const crossUser = seen.filter((entry) => entry.crossUserCount > 0);
  return {
    recalls: seen.length,
    zeroHits: seen.filter((entry) => entry.finalCount === 0).length,
    lastLanes: last.lanes,
    lastFinalCount: last.finalCount,
    rerankerAvailable: rerankers.at(-1)?.available ?? false,
    ...(crossUser.length > 0
      ? {
          crossUserRecalls: crossUser.length,
          lastCrossUserCount: (crossUser.at(-1) as RecallSeen).crossUserCount,
        }
      : {}),
  };
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

/** Rebuilds the object in the contract's key order, so JSON is stable whatever the build order. */
function orderReport(report: IncidentReport): IncidentReport {
  const order: Array<keyof IncidentReport> = [
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
  const out: Record<string, unknown> = {};
  for (const key of order) if (report[key] !== undefined) out[key] = report[key];
  return out as unknown as IncidentReport;
}
