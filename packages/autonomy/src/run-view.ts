import type { RunRecord, RunStatus } from './run-store.js';

/** The contract's sub-agent run record (`session.run_status`), plus the tree links. */
export interface RunView {
  runId: string;
  status: RunStatus;
  agentId: string;
  task: string;
  sessionKey: string;
  parentKey: string;
  parentRunId?: string;
  rootRunId: string;
  depth: number;
  startedAt: number;
  completedAt?: number;
  runtimeMs: number;
  response?: string;
  tokensUsed?: { input: number; output: number; total: number };
  cost?: number;
  error?: string;
  endReason?: string;
  toolCalls: number;
  resumed: number;
}

/** The wire view of a run: `response`, `tokensUsed`, `completedAt` once it ended. */
export function runView(record: RunRecord, now: number): RunView {
  const ended = record.status !== 'running';
  return {
    runId: record.runId,
    status: record.status,
    agentId: record.agentId,
    task: record.task,
    sessionKey: record.sessionKey,
    parentKey: record.parentSessionKey,
    ...(record.parentRunId !== undefined ? { parentRunId: record.parentRunId } : {}),
    rootRunId: record.rootRunId,
    depth: record.depth,
    startedAt: record.startedAt,
    ...(ended && record.completedAt !== undefined ? { completedAt: record.completedAt } : {}),
    runtimeMs: (ended ? (record.completedAt ?? now) : now) - record.startedAt,
    ...(ended ? { response: record.response ?? '', tokensUsed: { ...record.tokens } } : {}),
    cost: record.costUsd,
    ...(record.error !== undefined ? { error: record.error } : {}),
    ...(record.endReason !== undefined ? { endReason: record.endReason } : {}),
    toolCalls: record.toolCalls,
    resumed: record.resumed,
  };
}
