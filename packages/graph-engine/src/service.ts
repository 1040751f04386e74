import { randomUUID } from 'node:crypto';
import type { GraphCoordinator } from './cluster.js';
import type { Injected } from '@agentd/contracts';
import { type GraphSectionInput, settingsFromSection } from './config.js';
import type { GraphDatabase } from './database.js';
import type { GraphLimits } from './definition.js';
import { GraphError } from './errors.js';
import { type CapabilityClass, type EventSink, type GraphAuthor, noopEventSink } from './events.js';
import type { NodeExecutor, RunStatus } from './execute.js';
import type {
  DefinedGraph,
  ExecuteOptions,
  RunDetail,
  RunOutputs,
  RunStatusView,
  RunSummary,
  SavedGraph,
} from './graph-types.js';
import {
  deleteGraph,
  defineGraph,
  listGraphs,
  loadGraph,
  ownerOf,
  saveGraph,
} from './internal/definitions.js';
import { type GraphContext, graphOptionsSchema } from './internal/graph-context.js';
import { releaseOwned } from './internal/cluster-runs.js';
import { OutputFiles, OutputTable } from './internal/output-files.js';
import { cancelRun, executeRun, resumeRuns } from './internal/run-executor.js';
import { deleteRun, listRuns, runDetail, runOutputs, runStatus, waitForRun } from './internal/run-records.js';
import { type GraphLogger, noopLogger } from './logger.js';

/**
 * Options of {@link createGraphService}.
 * From {@link Injected}: `logger`, `now`, and `randomId` for graph and run ids, whose answers
 * must match {@link entityIdPattern}.
 */
export interface GraphServiceOptions extends Injected<GraphLogger> {
  /** Where definitions, saved graphs and run state live (an `@agentd/storage` Database works). */
  db: GraphDatabase;
  /** Directory of per-run output folders, `<data dir>/graph-runs` in agentd. */
  runsDir: string;
  /** Runs node attempts. Without one, `execute` throws `EXECUTOR_UNAVAILABLE` and nothing resumes. */
  executor?: NodeExecutor | undefined;
  /** Receives `pipeline:authored`. @default a sink that drops events */
  events?: EventSink | undefined;
  /** Capability class of an authoring agent's model. @default () => 'unknown' */
  capabilityClassOf?: ((agentId: string) => CapabilityClass) | undefined;
  /** Limits definitions are validated against. @default defaultGraphLimits */
  limits?: GraphLimits | undefined;
  /** Concurrency of a run that asks for none. @default 4 */
  defaultConcurrency?: number | undefined;
  /** Highest concurrency a run may ask for. @default 16 */
  maxConcurrency?: number | undefined;
  /** Time limit of a node attempt that sets none, in ms. @default 300000 */
  defaultNodeTimeoutMs?: number | undefined;
  /** Wait before a retry, in ms. @default 1000 */
  retryDelayMs?: number | undefined;
  /** Finished runs whose outputs stay in memory; older ones are served from disk. @default 16 */
  memoryRuns?: number | undefined;
  /**
   * The cluster coordinator (`openCoordination` of `@agentd/storage`), started by the caller.
   * Required on PostgreSQL: a run is owned and leased by the instance executing it, resumed
   * only by another once that lease expired, its node outputs kept in `graph_node_outputs`,
   * and a cancel asked elsewhere reaches the owner. On libsql it may be left out.
   */
  coordinator?: GraphCoordinator | undefined;
  /** Cluster mode: how long a run's ownership lasts without renewal (renewed every third). @default 15000 */
  runLeaseMs?: number | undefined;
}

/** Durable graph definitions and runs. */
export interface GraphService {
  /** True when a node executor is configured. */
  readonly canExecute: boolean;
  /** Applies migrations and resumes runs a previous process left unfinished. */
  start(): Promise<{ resumed: number }>;
  /** Validates and stores a definition (`{nodes, name?}`). @throws {GraphError} `INVALID_GRAPH` */
  define(input: unknown, author?: GraphAuthor): Promise<DefinedGraph>;
  /** Starts a run of a defined graph (`{graphId, inputs?, concurrency?}`). */
  execute(input: unknown, options?: ExecuteOptions): Promise<{ runId: string }>;
  /** Run status with outputs cut at {@link STATUS_OUTPUT_LIMIT}. */
  status(runId: string): Promise<RunStatusView>;
  /** Node outputs cut at {@link OUTPUT_VALUE_LIMIT}: memory first, then the run's files. */
  outputs(runId: string, nodeIds?: string[]): Promise<RunOutputs>;
  /** Cancels a pending or running run; `cancelled` is false when it had already finished. */
  cancel(runId: string): Promise<{ runId: string; status: RunStatus; cancelled: boolean }>;
  /**
   * Saves a defined graph under a name (replacing an earlier graph of that name); with `tenant`,
   * only that tenant's graph is found and the saved graph is the tenant's.
   */
  save(graphId: string, name: string, tenant?: string): Promise<SavedGraph & { graphId: string }>;
  /** Defines a fresh graph from a saved one. */
  load(name: string): Promise<DefinedGraph & { name: string }>;
  /** Saved graphs by name; with `tenant`, only that tenant's. */
  list(tenant?: string): Promise<{ graphs: SavedGraph[] }>;
  /** The owner of a graph, saved graph or run (`{}` for the operator's), undefined when there is none. */
  ownerOf(
    ref: { graphId: string } | { name: string } | { runId: string },
  ): Promise<{ tenant?: string } | undefined>;
  /** Deletes a saved graph only; definitions and runs stay. */
  delete(name: string): Promise<{ deleted: true; name: string }>;
  /** Runs, newest first. */
  runs(filter?: {
    graphId?: string | undefined;
    limit?: number | undefined;
    /** Only the runs of this tenant. */
    tenant?: string | undefined;
  }): Promise<{ runs: RunSummary[] }>;
  /** Everything recorded about one run (no outputs). */
  runDetail(runId: string): Promise<RunDetail>;
  /** Deletes a finished run's records and output files. @throws {GraphError} `RUN_ACTIVE` */
  deleteRun(runId: string): Promise<{ deleted: true; runId: string }>;
  /** Resolves with the final status once the run (active in this process) finishes. */
  waitForRun(runId: string): Promise<RunStatus>;
  /** Drops cached outputs of finished runs (all, or one), so reads go to disk. */
  evictMemory(runId?: string): void;
  /** Interrupts active runs (they resume at the next start) and flushes writes. */
  close(): Promise<void>;
  /**
   * Applies a new `graph` section in place: limits apply to the next define, concurrency to the
   * next execute, timeouts and retry delay to runs started from now on, `memoryRuns` at the next
   * finished run. Runs already going keep what they started with.
   * @throws {GraphError} `INVALID_OPTIONS` when the section fails validation (nothing changes then).
   */
  applyConfig(section: GraphSectionInput): void;
}

/**
 * Creates the durable graph service: definitions, saved graphs and runs in the database,
 * each node's output in `<runsDir>/<runId>/<nodeId>.txt`. Call `start()` before use.
 */
export function createGraphService(options: GraphServiceOptions): GraphService {
  const parsedOptions = graphOptionsSchema.safeParse(options);
  if (!parsedOptions.success) {
    throw new GraphError('INVALID_OPTIONS', `createGraphService: ${parsedOptions.error.issues[0]?.message}`, {
      data: { issues: parsedOptions.error.issues },
    });
  }
  const settings = parsedOptions.data;
  const coordinator = options.coordinator;
  if (options.db.dialect === 'pg' && coordinator?.mode !== 'postgres') {
    throw new GraphError(
      'INVALID_OPTIONS',
      'createGraphService: coordinator: graph runs on PostgreSQL need the cluster coordinator, so that runs are owned across instances',
    );
  }
  const files = new OutputFiles(options.runsDir);
  const cluster =
    coordinator?.mode === 'postgres'
      ? {
          coordinator,
          rows: coordinator.ownedRows({
            table: 'graph_runs',
            idColumn: 'run_id',
            leaseMs: settings.runLeaseMs,
          }),
          leaseMs: settings.runLeaseMs,
          fences: new Map<string, number>(),
          tails: new Map<string, Promise<boolean>>(),
          stop: undefined,
        }
      : undefined;
  const ctx: GraphContext = {
    db: options.db,
    executor: options.executor,
    events: options.events ?? noopEventSink,
    capabilityClassOf: options.capabilityClassOf ?? (() => 'unknown' as const),
    logger: options.logger ?? noopLogger,
    now: options.now ?? Date.now,
    randomId: options.randomId ?? randomUUID,
    settings,
    files,
    outputs: cluster ? new OutputTable(options.db) : files,
    cluster,
    active: new Map(),
    memory: new Map(),
    batcher: undefined,
    started: false,
    closed: false,
  };

  const service: GraphService = {
    get canExecute() {
      return ctx.executor !== undefined;
    },
    start: () => resumeRuns(ctx),
    define: (input, author = { origin: 'rpc' }) => defineGraph(ctx, input, author),
    execute: (input, executeOptions = {}) => executeRun(ctx, input, executeOptions),
    status: (runId) => runStatus(ctx, runId),
    outputs: (runId, nodeIds) => runOutputs(ctx, runId, nodeIds),
    cancel: (runId) => cancelRun(ctx, runId),
    save: (graphId, name, tenant) => saveGraph(ctx, graphId, name, tenant),
    load: (name) => loadGraph(ctx, name),
    list: (tenant) => listGraphs(ctx, tenant),
    ownerOf: (ref) => ownerOf(ctx, ref),
    delete: (name) => deleteGraph(ctx, name),
    runs: (filter = {}) => listRuns(ctx, filter),
    runDetail: (runId) => runDetail(ctx, runId),
    deleteRun: (runId) => deleteRun(ctx, runId),
    waitForRun: (runId) => waitForRun(ctx, runId),
    evictMemory(runId) {
      if (runId === undefined) ctx.memory.clear();
      else ctx.memory.delete(runId);
    },
    async close() {
      if (ctx.closed) return;
      const runs = [...ctx.active.values()];
      for (const run of runs) run.execution.interrupt();
      await Promise.all(runs.map((run) => run.finished));
      ctx.closed = true;
      // Handed back at once, so another instance takes them over without waiting out the lease.
      if (ctx.cluster) await releaseOwned(ctx.cluster);
      await ctx.batcher?.close();
    },
    applyConfig(section) {
      ctx.settings = { ...ctx.settings, ...settingsFromSection(section) };
    },
  };
  return service;
}
