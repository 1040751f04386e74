import { z } from 'zod';
import type { GraphCoordinator, GraphOwnedRows } from '../cluster.js';
import type { GraphDatabase, GraphWriteBatcher } from '../database.js';
import type { CompiledGraph, GraphLimits } from '../definition.js';
import { GraphError } from '../errors.js';
import {
  type CapabilityClass,
  type EventSink,
  type GraphAuthor,
  PIPELINE_AUTHORED,
  type PipelineAuthoredPayload,
} from '../events.js';
import type { GraphExecution, NodeExecutor, RunStatus } from '../execute.js';
import { entityIdPattern } from '../graph-types.js';
import type { GraphLogger } from '../logger.js';
import type { OutputFiles, OutputStore } from './output-files.js';
import type { NodeRow, RunRow } from './schema.js';

/** The service options as checked at the boundary. */
export const graphOptionsSchema = z.object({
  db: z.custom<GraphDatabase>(
    (value) => typeof value === 'object' && value !== null && 'transaction' in value,
    'db must be a database handle',
  ),
  runsDir: z.string().min(1),
  executor: z
    .custom<NodeExecutor>((value) => typeof (value as NodeExecutor | undefined)?.run === 'function')
    .optional(),
  events: z
    .custom<EventSink>((value) => typeof (value as EventSink | undefined)?.emit === 'function')
    .optional(),
  capabilityClassOf: z
    .custom<(agentId: string) => CapabilityClass>((v) => typeof v === 'function')
    .optional(),
  limits: z
    .object({
      maxNodes: z.number().int().min(1).optional(),
      maxPromptChars: z.number().int().min(1).optional(),
      maxRetries: z.number().int().min(0).optional(),
      maxTimeoutMs: z.number().int().min(1).optional(),
    })
    .optional(),
  defaultConcurrency: z.number().int().min(1).default(4),
  maxConcurrency: z.number().int().min(1).default(16),
  defaultNodeTimeoutMs: z.number().int().min(1).default(300_000),
  retryDelayMs: z.number().int().min(0).default(1000),
  memoryRuns: z.number().int().min(0).default(16),
  coordinator: z
    .custom<GraphCoordinator>(
      (value) => typeof (value as GraphCoordinator | undefined)?.ownedRows === 'function',
      'coordinator must be a coordinator (openCoordination of @agentd/storage)',
    )
    .optional(),
  runLeaseMs: z.number().int().min(100).max(3_600_000).default(15_000),
  logger: z.custom<GraphLogger>((v) => typeof v === 'object' && v !== null).optional(),
  now: z.custom<() => number>((v) => typeof v === 'function').optional(),
  randomId: z.custom<() => string>((v) => typeof v === 'function').optional(),
});

/** The validated options of the service. */
export type GraphSettings = z.output<typeof graphOptionsSchema>;

/** A cluster's view of the runs: the coordinator, the owned-row helpers, what this instance holds. */
export interface ClusterRuns {
  coordinator: GraphCoordinator;
  rows: GraphOwnedRows;
  leaseMs: number;
  /** The fence this instance holds each of its runs at. */
  fences: Map<string, number>;
  /** Per run, the last of its fenced writes: they commit in the order they were made. */
  tails: Map<string, Promise<boolean>>;
  /** Stops the renewal, takeover and cancel watch (set by `start()`). */
  stop: (() => void) | undefined;
}

/** A run this process is executing. */
export interface ActiveRun {
  runId: string;
  graphId: string;
  startedAt: number;
  graph: CompiledGraph;
  execution: GraphExecution;
  finished: Promise<RunStatus>;
}

/**
 * What the service's parts share: the injected dependencies, the output files,
 * the runs in progress, the outputs of recent runs, and the write batcher
 * (set by `start()`).
 */
export interface GraphContext {
  readonly db: GraphDatabase;
  readonly executor: NodeExecutor | undefined;
  readonly events: EventSink;
  readonly capabilityClassOf: (agentId: string) => CapabilityClass;
  readonly logger: GraphLogger;
  readonly now: () => number;
  readonly randomId: () => string;
  /** Replaced by `applyConfig`; read it at the time of use. */
  settings: GraphSettings;
  /** The output files (libsql): where a completed node's output is written on one instance. */
  readonly files: OutputFiles;
  /** Where outputs are read from: the files, or the `graph_node_outputs` table in a cluster. */
  readonly outputs: OutputStore;
  /** Cluster mode (PostgreSQL) only: how runs are owned across instances. */
  readonly cluster: ClusterRuns | undefined;
  readonly active: Map<string, ActiveRun>;
  /** Outputs of recently finished runs, oldest first. */
  readonly memory: Map<string, Map<string, string>>;
  batcher: GraphWriteBatcher | undefined;
  started: boolean;
  closed: boolean;
}

// Stored definitions were validated when defined; a later, lower limit must not strand them.
export const storedLimits: GraphLimits = {
  maxNodes: Number.MAX_SAFE_INTEGER,
  maxPromptChars: Number.MAX_SAFE_INTEGER,
  maxRetries: Number.MAX_SAFE_INTEGER,
  maxTimeoutMs: Number.MAX_SAFE_INTEGER,
};

/** The write batcher; throws `CLOSED` unless started and not closed. */
export function ready(ctx: GraphContext): GraphWriteBatcher {
  if (ctx.closed) throw new GraphError('CLOSED', 'the graph service is closed');
  if (!ctx.started || !ctx.batcher) throw new GraphError('CLOSED', 'the graph service was not started');
  return ctx.batcher;
}

/** Emits `pipeline:authored` for `author`; a throwing sink is logged, never thrown. */
export function emitAuthored(
  ctx: GraphContext,
  payload: Omit<PipelineAuthoredPayload, 'agentId' | 'capabilityClass' | 'origin' | 'timestamp'>,
  author: GraphAuthor,
): void {
  const agentId = author.agentId ?? null;
  const event: PipelineAuthoredPayload = {
    ...payload,
    origin: author.origin,
    agentId,
    capabilityClass: agentId === null ? 'unknown' : safeClass(ctx.capabilityClassOf, agentId),
    timestamp: ctx.now(),
  };
  try {
    ctx.events.emit(PIPELINE_AUTHORED, event as unknown as Record<string, unknown>);
  } catch (error) {
    ctx.logger.warn({ err: error, hint: 'check the event sink', errorKind: 'internal' }, 'event sink threw');
  }
}

/** Keeps a finished run's outputs in memory, dropping the oldest beyond `memoryRuns`. */
export function remember(ctx: GraphContext, runId: string, outputs: Map<string, string>): void {
  if (ctx.settings.memoryRuns === 0) return;
  ctx.memory.delete(runId);
  ctx.memory.set(runId, outputs);
  while (ctx.memory.size > ctx.settings.memoryRuns) {
    const oldest = ctx.memory.keys().next().value as string;
    ctx.memory.delete(oldest);
  }
}

/** The run's row; throws `RUN_NOT_FOUND`. */
export async function loadRun(ctx: GraphContext, runId: string): Promise<RunRow> {
  const row = entityIdPattern.test(runId)
    ? await ctx.db.get<RunRow>('SELECT * FROM graph_runs WHERE run_id = ?', [runId])
    : undefined;
  if (!row) throw new GraphError('RUN_NOT_FOUND', `Run not found: ${runId}`, { data: { runId } });
  return row;
}

/** The run's node rows in definition order. */
export function loadNodes(ctx: GraphContext, runId: string): Promise<NodeRow[]> {
  return ctx.db.query<NodeRow>('SELECT * FROM graph_run_nodes WHERE run_id = ? ORDER BY position', [runId]);
}

function safeClass(classOf: (agentId: string) => CapabilityClass, agentId: string): CapabilityClass {
  try {
    return classOf(agentId);
  } catch {
    return 'unknown';
  }
}
