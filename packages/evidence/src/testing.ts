/**
 * Sample evidence for tests of this package and of its readers' users (`@agentd/evidence/testing`):
 * one turn's trajectory and session-index lines as the agent runtime writes them, and the
 * temporary data directories they are written to. Not part of the main entry point.
 */
import type { Logger } from '@agentd/contracts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type SessionIndexRecord,
  TRAJECTORY_DIR,
  type TrajectoryRecord,
  trajectoryFileName,
} from './records.js';
import type { EVIDENCE_SCHEMAS } from './event-schemas.js';
import type { EvidenceWriter } from './writer.js';

/** A fresh directory under the OS temp dir, named `prefix` and a random suffix. */
export const makeTempDir = (prefix: string): string => mkdtempSync(join(tmpdir(), prefix));

/** Removes a directory made by {@link makeTempDir}, with everything in it. */
export const removeTempDir = (path: string): void => rmSync(path, { recursive: true, force: true });

/** The per-test hooks of a test runner; vitest's `beforeEach` and `afterEach` fit. */
export interface PerTestHooks {
  beforeEach(run: () => void): void;
  afterEach(run: () => void): void;
}

/**
 * A temp directory made before each test and removed after it, through the runner's hooks
 * (passed in so this module does not depend on a test runner). `path` is the current test's.
 */
export function tempDirEachTest(prefix: string, hooks: PerTestHooks): { readonly path: string } {
  let current: string | undefined;
  hooks.beforeEach(() => {
    current = makeTempDir(prefix);
  });
  hooks.afterEach(() => {
    if (current !== undefined) removeTempDir(current);
    current = undefined;
  });
  return {
    get path() {
      if (current === undefined) throw new Error('tempDirEachTest: the directory exists only during a test');
      return current;
    },
  };
}

/** A logger that keeps the fields of every warning (other levels are dropped), for assertions. */
export function warningLogger(): { logger: Logger; warnings: Array<Record<string, unknown>> } {
  const warnings: Array<Record<string, unknown>> = [];
  const ignore = () => undefined;
  const logger: Logger = {
    warn: (fields) => {
      warnings.push(fields);
    },
    info: ignore,
    debug: ignore,
    error: ignore,
  };
  return { logger, warnings };
}

/** The fields every trajectory line of a turn shares. */
const base = (sessionKey: string, turn: number) => ({
  v: 1 as const,
  sessionKey,
  traceId: `trace-${sessionKey}-${turn}`,
  agentId: 'helper',
});

/**
 * One turn's trajectory lines: turn_start, a budget, `calls` tool calls, turn_end. Call `i`
 * fails when `fails(i)` says so (by default only the second).
 */
export function turnRecords(
  sessionKey: string,
  turn: number,
  ts: number,
  calls = 3,
  fails: (i: number) => boolean = (i) => i === 1,
): TrajectoryRecord[] {
  const b = base(sessionKey, turn);
  const tools: TrajectoryRecord[] = Array.from({ length: calls }, (_, i) => ({
    ...b,
    ts: ts + 10 + i,
    type: 'tool_call' as const,
    seq: i + 1,
    step: 1,
    toolName: ['search', 'fetch', 'shell'][i % 3] as string,
    toolCallId: `call-${turn}-${i}`,
    ok: !fails(i),
    durationMs: 12.5 + i,
    ...(fails(i) ? { errorKind: 'timeout', errorPreview: 'upstream 503' } : {}),
    resultBytes: 100 + i,
    resultDigest: `sha256:${String(turn * 100 + i).padStart(16, '0')}`,
  }));
  const failed = Array.from({ length: calls }, (_, i) => i).filter(fails).length;
  return [
    { ...b, ts, type: 'turn_start', origin: 'channel', provider: 'offline', model: 'echo' },
    {
      ...b,
      ts: ts + 5,
      type: 'context_budget',
      step: 1,
      budget: {
        windowTokens: 8000,
        rawContextWindowTokens: 8000,
        windowCapSource: 'none',
        systemTokens: 100,
        freshTailTokens: 300,
        budgetedHistoryTokens: 200,
        keptCount: 4,
        assembledInputTokens: 600,
        outputHeadroom: 1024,
        verdict: 'fits',
      },
    },
    ...tools,
    {
      ...b,
      ts: ts + 100,
      type: 'turn_end',
      endReason: failed ? 'completed_with_tool_errors' : 'completed',
      finishReason: 'stop',
      steps: 2,
      durationMs: 100,
      tokens: { input: 500, output: 60, total: 560, cacheRead: 100, cacheWrite: 0 },
      costUsd: 0.0004,
      toolCalls: { ok: calls - failed, failed },
    },
  ];
}

/**
 * The session-index line of a turn built by {@link turnRecords}: `calls` tool calls of which
 * the second failed, or the turn's own `{ ok, failed }` counts.
 */
export function indexRecord(
  sessionKey: string,
  turn: number,
  ts: number,
  calls: number | { ok: number; failed: number } = 3,
): SessionIndexRecord {
  const toolCalls =
    typeof calls === 'number' ? { ok: calls - (calls > 1 ? 1 : 0), failed: calls > 1 ? 1 : 0 } : calls;
  const failed = toolCalls.failed;
  return {
    v: 1,
    ts,
    traceId: `trace-${sessionKey}-${turn}`,
    messageId: `${sessionKey}#${turn * 2 - 1}`,
    sessionKey,
    agentId: 'helper',
    channelType: 'webchat',
    origin: 'channel',
    kind: 'main',
    provider: 'offline',
    model: 'echo',
    outcome: {
      endReason: failed ? 'completed_with_tool_errors' : 'completed',
      degraded: failed > 0,
      severity: failed ? 'warning' : 'info',
    },
    finishReason: 'stop',
    costUsd: 0.0004,
    tokens: { input: 500, output: 60, total: 560, cacheRead: 100, cacheWrite: 0 },
    durationMs: 100,
    steps: 2,
    toolCalls,
    synthetic: false,
    trajectoryFile: `${TRAJECTORY_DIR}/${trajectoryFileName(sessionKey)}`,
  };
}

/** Writes one turn the way the runtime does: its trajectory lines, then its index line. */
export async function writeTurn(
  writer: EvidenceWriter,
  sessionKey: string,
  turn: number,
  ts: number,
  calls = 3,
) {
  await Promise.all([
    writer.trajectory(sessionKey, turnRecords(sessionKey, turn, ts, calls)),
    writer.sessionIndex(indexRecord(sessionKey, turn, ts + 100, calls)),
  ]);
}

/**
 * The diagnostic-event payloads the packages emit today, as their source writes them, one per
 * category of {@link EVIDENCE_SCHEMAS} the reports read, stamped `now`.
 */
export function producedPayloads(now: number): Record<string, Record<string, unknown>> {
  return {
    'memory:recalled': {
      agentId: 'helper',
      tenant: null,
      lanes: ['fts', 'vector'],
      ftsCandidates: 4,
      vectorCandidates: 0,
      finalCount: 2,
      exact: true,
      reranked: false,
      degraded: true,
      missingEmbeddings: 0,
      durationMs: 3,
      timestamp: now,
    },
    'memory:reranked': { agentId: null, candidates: 8, fellBack: true, timedOut: true, durationMs: 50 },
    'pipeline:authored': {
      action: 'define',
      origin: 'tool',
      agentId: 'helper',
      capabilityClass: 'small',
      valid: false,
      nodeCount: 0,
      invalidReason: 'parse',
      timestamp: now,
    },
    'cron:fired': {
      jobId: 'job-1',
      agentId: 'helper',
      trigger: 'schedule',
      status: 'ok',
      catchUp: false,
      gateOutcome: 'failed-open',
      gateDurationMs: 12,
      gateFailure: 'timeout',
      durationMs: 40,
      toolCalls: 0,
      estTurnsSaved: 0,
      timestamp: now,
    },
    'tool:breaker': {
      sessionKey: 'web:chat-1',
      agentId: 'helper',
      traceId: 'trace-1',
      toolName: 'fetch',
      toolCallId: 'call-3',
      seq: 3,
      event: 'opened',
      consecutiveFailures: 3,
      ts: now,
    },
    'offload:written': {
      sessionKey: 'web:chat-1',
      agentId: 'helper',
      traceId: 'trace-1',
      toolName: 'fetch',
      toolCallId: 'call-4',
      seq: 4,
      bytes: 200_000,
      diskPathRel: 'obs/offloads/web_chat-1-0123456789abcdef/trace-1-call-4.json',
      resultDigest: 'sha256:0123456789abcdef',
      resolved: true,
    },
    config_posture: { servedBelowConfigured: 1, providersProbed: 1, providersUnreachable: 0, below: {} },
  };
}
