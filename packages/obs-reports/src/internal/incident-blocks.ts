/** The blocks of an IncidentReport, each computed from its part of a session's evidence. */
import type { SessionIndexRecord, TrajectoryRecord } from '@agentd/evidence';
import type { DiagnosticEvent } from '../evidence-store.js';
import type { IncidentReport, SessionEvidence } from '../incident-report.js';
import { bool, bump, count, num, obj, ratio, str, strings, usd } from './values.js';

type ToolCallRecord = Extract<TrajectoryRecord, { type: 'tool_call' }>;
type TurnEndRecord = Extract<TrajectoryRecord, { type: 'turn_end' }>;
type Data = DiagnosticEvent['data'];

const SEVERITY_RANK = { info: 0, warning: 1, error: 2 } as const;

/** Outcome: the last degraded turn names the cause; severity is the worst seen. */
export function outcomeOf(index: SessionIndexRecord[], turnEnds: TurnEndRecord[]): IncidentReport['outcome'] {
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
  return {
    endReason: lastDegraded?.endReason ?? outcomes.at(-1)?.endReason ?? 'unknown',
    degraded: lastDegraded !== undefined,
    severity,
  };
}

/** Cost and timing come from the session index (one line per turn), else from turn_end records. */
export function costAndTiming(
  index: SessionIndexRecord[],
  turnEnds: TurnEndRecord[],
): Pick<IncidentReport, 'cost' | 'timing'> {
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
  return {
    cost: {
      costUsd: usd(turns.reduce((sum, turn) => sum + turn.costUsd, 0)),
      totalTokens: turns.reduce((sum, turn) => sum + turn.tokens.total, 0),
      cacheReadRatio: ratio(cacheRead, input),
    },
    timing: {
      durationMs: Math.round(turns.reduce((sum, turn) => sum + turn.durationMs, 0)),
      turnCount: turns.length,
    },
  };
}

/** Per-tool counts of a session's tool calls, from the trajectory (provenance only). */
export interface ToolActivity {
  perTool: Map<string, { ok: number; failed: number; kinds: Map<string, number> }>;
  /** Failed calls with their session-wide seq, newest first; error text is fingerprinted only for those kept. */
  failedCalls: Array<{ seq: number; record: ToolCallRecord }>;
  /** Tool call (trace id and call id) to its session-wide seq, for the calls breaker rows name. */
  seqOfCall: Map<string, number>;
}

/** The key of one tool call in {@link ToolActivity.seqOfCall}. */
export const callKey = (traceId: string | undefined, toolCallId: string | undefined) =>
  `${traceId}\u0000${toolCallId}`;

export function toolActivity(trajectory: TrajectoryRecord[], diagnostics: DiagnosticEvent[]): ToolActivity {
  const perTool: ToolActivity['perTool'] = new Map();
  const failedCalls: ToolActivity['failedCalls'] = [];
  let callSeq = 0;
  // Built only when the session has breaker rows (a long trajectory would pay for nothing).
  const breakerCalls = new Set<string>();
  for (const row of diagnostics) {
    if (row.category === 'tool:breaker' && typeof row.data.toolCallId === 'string')
      breakerCalls.add(callKey(str(row.data, 'traceId'), row.data.toolCallId));
  }
  const seqOfCall = new Map<string, number>();
  for (const record of trajectory) {
    if (record.type !== 'tool_call') continue;
    callSeq += 1;
    if (breakerCalls.size > 0) {
      const call = callKey(record.traceId, record.toolCallId);
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
  return { perTool, failedCalls, seqOfCall };
}

/** Breaker rows, newest first. */
export function breakerEntries(
  rows: DiagnosticEvent[],
  seqOfCall: ToolActivity['seqOfCall'],
): IncidentReport['breakerTimeline'] {
  return rows
    .map((row) => ({
      // The runtime's seq restarts per turn; the call's session-wide seq matches failures[].seq.
      seq:
        seqOfCall.get(callKey(str(row.data, 'traceId'), str(row.data, 'toolCallId'))) ??
        count(row.data, 'seq'),
      event: str(row.data, 'event') ?? 'opened',
      toolName: str(row.data, 'toolName') ?? 'unknown',
    }))
    .reverse();
}

/** Offload rows, oldest first; a pointer whose file is gone counts as unresolved. */
export function offloadEntries(
  rows: DiagnosticEvent[],
  missing: ReadonlySet<string> | undefined,
): IncidentReport['offloads'] {
  return rows.map((row) => {
    const diskPathRel = str(row.data, 'diskPathRel') ?? 'unknown';
    return {
      diskPathRel,
      bytes: count(row.data, 'bytes'),
      resolved: bool(row.data, 'resolved', true) && !missing?.has(diskPathRel),
    };
  });
}

/** The `voice` block, from the session's last `voice:turn` row. */
export function voiceBlock(data: Data): NonNullable<IncidentReport['voice']> {
  const keyless = bool(data, 'keyless');
  const failed = str(data, 'outcome') === 'failed';
  return {
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

/** The `learning` block, from the session's last `learning:observed` row. */
export function learningBlock(data: Data): NonNullable<IncidentReport['learning']> {
  const optionalCount = (key: string) => (typeof data[key] === 'number' ? { [key]: count(data, key) } : {});
  return {
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

/** One `orchestrate` entry, from an `orchestrate:run_summary` row. */
export function orchestrateEntry(data: Data): NonNullable<IncidentReport['orchestrate']>[number] {
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
export function recallBlock(
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

/** The `coverage` block; rule 4: the session-index rollup is a subset of the trajectory. */
export function coverageBlock(
  evidence: SessionEvidence,
  perTool: ToolActivity['perTool'],
  offloads: IncidentReport['offloads'],
): NonNullable<IncidentReport['coverage']> {
  const { index } = evidence;
  const rollupOk = index.reduce((sum, record) => sum + record.toolCalls.ok, 0);
  const rollupFailed = index.reduce((sum, record) => sum + record.toolCalls.failed, 0);
  const trajOk = [...perTool.values()].reduce((sum, entry) => sum + entry.ok, 0);
  const trajFailed = [...perTool.values()].reduce((sum, entry) => sum + entry.failed, 0);
  const divergent = rollupOk !== trajOk || rollupFailed !== trajFailed;
  return {
    trajectory: { found: evidence.trajectory.found, records: evidence.trajectory.records.length },
    rollup: { present: index.length > 0 },
    offloads: {
      pointersResolved: offloads.filter((row) => row.resolved).length,
      pointersTotal: offloads.length,
    },
    sources: { session: 'agentd.db#agent_messages', trajectory: evidence.trajectory.file },
    toolStats: {
      reconciled: rollupOk <= trajOk && rollupFailed <= trajFailed,
      rollupSource: 'session-index',
      // The rollup is per session, not per tool: a divergence is reported under `*`.
      divergentTools: index.length > 0 && divergent ? ['*'] : [],
    },
  };
}
