import type { SessionIndexRecord, TrajectoryRecord } from '@agentd/evidence';
import { indexRecord as sampleIndexRecord } from '@agentd/evidence/testing';
import type { DiagnosticEvent } from '../src/evidence-store.js';
import type { FleetEvidence } from '../src/fleet-report.js';
import type { SessionEvidence } from '../src/incident-report.js';

/** A secret and a raw tool output planted in every fixture; no report may contain either. */
export const PLANTED_SECRET = 'sk-live-PLANTEDsecret0123456789';
export const PLANTED_OUTPUT = 'RAW TOOL OUTPUT: the customer ledger says 4111 1111 1111 1111';

const T0 = Date.UTC(2025, 0, 15, 12, 0, 0);
type EndReason = SessionIndexRecord['outcome']['endReason'];

/** One turn's session-index line: the shared sample line with the cost, timing and outcome the goldens pin. */
export function indexRecord(
  sessionKey: string,
  turn: number,
  endReason: EndReason,
  extra: Partial<SessionIndexRecord> = {},
): SessionIndexRecord {
  const degraded = endReason !== 'completed' && endReason !== 'cancelled';
  return {
    ...sampleIndexRecord(sessionKey, turn, T0 + turn * 1000, 0),
    channelType: 'web',
    outcome: { endReason, degraded, severity: degraded ? 'warning' : 'info' },
    costUsd: 0.0012,
    tokens: { input: 1000, output: 200, total: 1200, cacheRead: 250, cacheWrite: 0 },
    durationMs: 1500,
    ...extra,
  };
}

export function toolCall(
  sessionKey: string,
  seq: number,
  toolName: string,
  ok: boolean,
  errorKind?: string,
): TrajectoryRecord {
  return {
    v: 1,
    ts: T0 + seq * 10,
    sessionKey,
    traceId: `trace-${sessionKey}-1`,
    agentId: 'helper',
    type: 'tool_call',
    seq,
    step: 1,
    toolName,
    toolCallId: `call-${seq}`,
    ok,
    durationMs: 12,
    ...(ok
      ? {}
      : { errorKind: errorKind ?? 'tool_error', errorPreview: `${PLANTED_OUTPUT} ${PLANTED_SECRET}` }),
    resultBytes: 2048,
    resultDigest: `sha256:${String(seq).padStart(16, '0')}`,
  };
}

export function budget(sessionKey: string, verdict: 'fits' | 'exhausted'): TrajectoryRecord {
  return {
    v: 1,
    ts: T0 + 5,
    sessionKey,
    traceId: `trace-${sessionKey}-1`,
    agentId: 'helper',
    type: 'context_budget',
    step: 1,
    budget: {
      windowTokens: 8192,
      rawContextWindowTokens: 128000,
      windowCapSource: 'effectiveContextCapNano',
      systemTokens: 900,
      freshTailTokens: 7000,
      budgetedHistoryTokens: 0,
      keptCount: 0,
      assembledInputTokens: 7900,
      outputHeadroom: 292,
      verdict,
    },
  };
}

/** The runtime's automatic-recall figures of one turn (as in a session-index line). */
function autoRecall(finalCount: number, reranked: boolean): NonNullable<SessionIndexRecord['recall']> {
  return {
    ok: true,
    lanes: ['fts', 'vector'],
    finalCount,
    ftsCandidates: 4,
    vectorCandidates: 6,
    reranked,
    rerankFellBack: false,
    degraded: false,
    injectedTokens: 0,
    durationMs: 14,
  };
}

let nextId = 1;
export function diag(category: string, data: DiagnosticEvent['data'], sessionKey?: string): DiagnosticEvent {
  return { id: nextId++, ts: T0 + nextId, category, ...(sessionKey ? { sessionKey } : {}), data };
}

function session(
  sessionKey: string,
  index: SessionIndexRecord[],
  trajectory: TrajectoryRecord[],
  diagnostics: DiagnosticEvent[] = [],
): SessionEvidence {
  return {
    sessionKey,
    index,
    trajectory: { found: true, file: `obs/trajectories/${sessionKey}.jsonl`, records: trajectory },
    diagnostics,
    cronWakes: [],
  };
}

/** One session per end reason and root-cause code. */
export function incidentCorpus(): Record<string, SessionEvidence> {
  nextId = 1;
  const many = Array.from({ length: 60 }, (_, i) =>
    toolCall('s-many', i + 1, i % 3 === 0 ? 'search' : `tool_${i % 7}`, i % 2 === 0, 'timeout'),
  );
  return {
    completed: session(
      's-ok',
      [indexRecord('s-ok', 1, 'completed', { toolCalls: { ok: 1, failed: 0 } })],
      [toolCall('s-ok', 1, 'add', true)],
    ),
    completed_with_tool_errors: session(
      's-tools',
      [indexRecord('s-tools', 1, 'completed_with_tool_errors', { toolCalls: { ok: 1, failed: 2 } })],
      [
        toolCall('s-tools', 1, 'fetch', false, 'timeout'),
        toolCall('s-tools', 2, 'fetch', false, 'timeout'),
        toolCall('s-tools', 3, 'add', true),
      ],
    ),
    context_exhausted: session(
      's-ctx',
      [indexRecord('s-ctx', 1, 'context_exhausted')],
      [budget('s-ctx', 'fits'), budget('s-ctx', 'exhausted')],
    ),
    prompt_timeout: session(
      's-timeout',
      [indexRecord('s-timeout', 1, 'completed'), indexRecord('s-timeout', 2, 'timeout')],
      [],
    ),
    output_starved: session('s-starved', [indexRecord('s-starved', 1, 'output_starved')], []),
    recall_miss: session(
      's-recall',
      [indexRecord('s-recall', 1, 'max_steps')],
      [],
      [
        diag('memory:recalled', { finalCount: 0, lanes: ['fts', 'vector'], crossUserCount: 0 }, 's-recall'),
        diag('memory:recalled', { finalCount: 0, lanes: ['fts'] }, 's-recall'),
        diag('memory:reranked', { fellBack: true, timedOut: true }, 's-recall'),
      ],
    ),
    recall_miss_session_index: session(
      's-autorecall',
      [
        indexRecord('s-autorecall', 1, 'completed', { recall: autoRecall(0, true) }),
        indexRecord('s-autorecall', 2, 'max_steps', { recall: autoRecall(0, false) }),
      ],
      [],
    ),
    breaker_opened: session(
      's-breaker',
      [
        indexRecord('s-breaker', 1, 'completed', { toolCalls: { ok: 1, failed: 0 } }),
        indexRecord('s-breaker', 2, 'completed_with_tool_errors', { toolCalls: { ok: 0, failed: 3 } }),
      ],
      [
        toolCall('s-breaker', 1, 'add', true),
        // Second turn: its per-turn seq restarts at 1.
        ...[1, 2, 3].map((seq) => ({
          ...toolCall('s-breaker', seq, 'fetch', false, 'tool_error'),
          traceId: 'trace-s-breaker-2',
        })),
      ],
      [
        diag(
          'tool:breaker',
          { event: 'opened', toolName: 'fetch', seq: 2, traceId: 'trace-s-breaker-2', toolCallId: 'call-2' },
          's-breaker',
        ),
        diag(
          'offload:written',
          { diskPathRel: 'obs/offloads/s-breaker/1.json', bytes: 90000, resolved: true },
          's-breaker',
        ),
      ],
    ),
    orchestrate_failed: session(
      's-orch',
      [indexRecord('s-orch', 1, 'completed')],
      [],
      [
        diag(
          'orchestrate:run_summary',
          {
            runId: 'run-1',
            leaseId: 'lease-1',
            exitCode: 0,
            durationMs: 900,
            toolCalls: [{ tool: 'read', capability: 'fs', decision: 'allow', count: 3 }],
            resultRefs: { count: 2, bytes: 4096 },
            savings: { estSavedTokens: 1200, savedRatio: 0.4 },
          },
          's-orch',
        ),
        diag(
          'orchestrate:run_summary',
          {
            runId: 'run-2',
            exitCode: 137,
            durationMs: 30000,
            failureClass: 'timeout',
            toolCalls: [],
            resultRefs: { count: 0, bytes: 0 },
          },
          's-orch',
        ),
      ],
    ),
    terminal_drive_opened_without_task: session(
      's-drive',
      [indexRecord('s-drive', 1, 'completed')],
      [],
      [diag('terminal.drive_promoted', { taskSent: false }, 's-drive')],
    ),
    terminal_drive_evicted: session(
      's-evict',
      [indexRecord('s-evict', 1, 'completed')],
      [],
      [
        diag(
          'terminal.session_evicted',
          { reason: 'max_sessions', idleMs: 10, wasProducing: false },
          's-evict',
        ),
        diag('terminal.session_evicted', { reason: 'idle', idleMs: 600000, wasProducing: false }, 's-evict'),
      ],
    ),
    learned_skill_failing: session(
      's-skill',
      [indexRecord('s-skill', 1, 'completed')],
      [],
      [
        diag(
          'learning:observed',
          {
            outcomeResolved: true,
            outcome: 'failure',
            sources: ['tool', 'tool', 'judge'],
            skillsUsed: 2,
            skillFailures: 1,
            synthesisAbstained: false,
          },
          's-skill',
        ),
      ],
    ),
    synthesis_abstained_low_capability: session(
      's-abstain',
      [indexRecord('s-abstain', 1, 'completed')],
      [],
      [
        diag(
          'learning:observed',
          {
            outcomeResolved: true,
            outcome: 'success',
            sources: ['explicit'],
            skillsUsed: 0,
            skillFailures: 0,
            synthesisAbstained: true,
          },
          's-abstain',
        ),
      ],
    ),
    outcome_unresolved: session(
      's-unresolved',
      [indexRecord('s-unresolved', 1, 'completed')],
      [],
      [
        diag(
          'learning:observed',
          { outcomeResolved: false, sources: [], skillsUsed: 0, skillFailures: 0, synthesisAbstained: false },
          's-unresolved',
        ),
        diag(
          'voice:turn',
          {
            provider: 'whisper-local',
            keyless: true,
            model: 'base',
            durationMs: 800,
            source: 'keyless-local',
            outcome: 'ok',
          },
          's-unresolved',
        ),
      ],
    ),
    cron_woken: {
      ...session('s-cron', [indexRecord('s-cron', 1, 'completed')], []),
      cronWakes: [{ jobId: 'job-1', ts: T0, gateOutcome: 'wake', gateDurationMs: 40, toolCalls: 2 }],
    },
    many_failures: session(
      's-many',
      [indexRecord('s-many', 1, 'completed_with_tool_errors', { toolCalls: { ok: 40, failed: 30 } })],
      many,
    ),
  };
}

/** A fleet window that triggers every finding this package can compute. */
export function fleetCorpus(): FleetEvidence {
  nextId = 1000;
  const index: SessionIndexRecord[] = [];
  for (let i = 0; i < 10; i += 1) {
    const reason: EndReason = i < 3 ? 'timeout' : i === 3 ? 'context_exhausted' : 'completed';
    index.push(
      indexRecord(`f-${i}`, i + 1, reason, {
        agentId: i % 2 ? 'helper' : 'ops',
        channelType: i % 3 ? 'web' : 'cli',
        ...(i === 0 ? { errorCode: 'PROVIDER_TIMEOUT' } : {}),
      }),
    );
  }
  const authored = (capabilityClass: string, valid: boolean) =>
    diag('pipeline:authored', { action: 'define', capabilityClass, valid, nodeCount: 3 });
  return {
    windowHours: 24,
    index,
    toolCalls: [
      toolCall('f-1', 1, 'fetch', false, 'timeout'),
      toolCall('f-1', 2, 'fetch', true),
      toolCall('f-2', 1, 'add', false, 'invalid_input'),
    ] as FleetEvidence['toolCalls'],
    diagnostics: [
      diag('tool:breaker', { event: 'opened', toolName: 'fetch', seq: 2 }),
      diag('config_posture', { servedBelowConfigured: 'many', importedSkillsOutsideAllowlist: 1 }),
      diag('config_posture', { servedBelowConfigured: 2, importedSkillsOutsideAllowlist: 'x' }),
      diag('voice_degraded', { errorKind: 'network' }),
      diag('voice_degraded', { errorKind: 'network' }),
      diag('voice_degraded', { errorKind: 'timeout' }),
      ...Array.from({ length: 20 }, (_, i) => authored('small', i % 2 === 0)),
      ...Array.from({ length: 5 }, () => authored('frontier', true)),
      authored('mid', false),
      diag('pipeline:authored', {
        action: 'define',
        capabilityClass: 'small',
        valid: false,
        nodeCount: 0,
        excluded: 'empty_define',
      }),
      diag('orchestrate:run_summary', {
        runId: 'r1',
        exitCode: 0,
        savings: { estSavedTokens: 500, savedRatio: 0.5 },
      }),
      diag('learning:lifecycle_swept', { scanned: 10, promoted: 1, demoted: 2, evicted: 3 }),
    ],
    cronWakeGate: {
      fires: { total: 4, skipped: 2, skipRate: 0.5, failedOpen: 1, failOpenRate: 0.25 },
      turnsSaved: 2,
      toolCalls: 5,
      perAgent: [
        {
          agentId: 'ops',
          fires: 4,
          skipped: 2,
          skipRate: 0.5,
          failedOpen: 1,
          failOpenRate: 0.25,
          turnsSaved: 2,
          toolCalls: 5,
        },
      ],
    },
    coverage: {
      sessionSummaryStore: { found: true, rows: 10 },
      sessionIndex: { daysRead: 2, daysMissing: 0 },
      billing: { present: true },
    },
  };
}
