import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { GraphDatabase, GraphSqlValue, GraphWriteBatcher } from './database.js';
import { type CompiledGraph, compileGraph, type GraphDefinition, type GraphLimits } from './definition.js';
import { GraphError } from './errors.js';
import { type GraphSectionInput, settingsFromSection } from './config.js';
import {
  type CapabilityClass,
  type EventSink,
  type GraphAuthor,
  noopEventSink,
  PIPELINE_AUTHORED,
  type PipelineAuthoredPayload,
} from './events.js';
import {
  executeGraph,
  type ExecutionOutcome,
  type GraphExecution,
  type NodeExecutor,
  type NodeState,
  type NodeStatus,
  type RunStatus,
} from './execute.js';
import { OutputFiles } from './internal/output-files.js';
import { MIGRATION_PACKAGE, migrations, type NodeRow, type RunRow } from './internal/schema.js';
import { type GraphLogger, noopLogger } from './logger.js';

/** Characters of each value returned by output retrieval (the contract's limit). */
export const OUTPUT_VALUE_LIMIT = 12_000;
/** Characters of each node output shown by `status` (the contract's limit). */
export const STATUS_OUTPUT_LIMIT = 500;

/** Ids of graphs and runs: what `randomId()` produces and what can be a file name. */
export const entityIdPattern = /^[A-Za-z0-9_-]{1,128}$/;
/** Names of saved graphs: 1-128 characters, no control characters. */
export const savedNamePattern = /^[^\p{Cc}]{1,128}$/u;

const optionsSchema = z.object({
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
  logger: z.custom<GraphLogger>((v) => typeof v === 'object' && v !== null).optional(),
  now: z.custom<() => number>((v) => typeof v === 'function').optional(),
  randomId: z.custom<() => string>((v) => typeof v === 'function').optional(),
});

/** Options of {@link createGraphService}. */
export interface GraphServiceOptions {
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
  /** Logger. @default a logger that drops everything */
  logger?: GraphLogger | undefined;
  /** Clock. @default Date.now */
  now?: (() => number) | undefined;
  /** Id generator for graphs and runs; must match {@link entityIdPattern}. @default randomUUID */
  randomId?: (() => string) | undefined;
}

/** What `define` and `load` return. */
export interface DefinedGraph {
  graphId: string;
  nodeCount: number;
}

/** One node in `status`. */
export interface RunStatusNode {
  id: string;
  status: NodeStatus;
  /** First {@link STATUS_OUTPUT_LIMIT} characters, once completed. */
  output?: string;
  error?: string;
}

/** What `status` returns. */
export interface RunStatusView {
  runId: string;
  graphId: string;
  status: RunStatus;
  startedAt: number;
  finishedAt?: number;
  nodes: RunStatusNode[];
}

/** What output retrieval returns: `null` for a node not complete. */
export interface RunOutputs {
  outputs: Record<string, string | null>;
  source: 'memory' | 'disk';
}

/** A saved named graph, as `list` shows it. */
export interface SavedGraph {
  name: string;
  createdAt: number;
  nodeCount: number;
}

/** One run in `runs`. */
export interface RunSummary {
  runId: string;
  graphId: string;
  status: RunStatus;
  startedAt: number;
  finishedAt?: number;
  nodeCount: number;
}

/** One node in `runDetail`. */
export interface RunDetailNode {
  id: string;
  agentId?: string;
  dependsOn: string[];
  status: NodeStatus;
  attempts: number;
  startedAt?: number;
  finishedAt?: number;
  error?: string;
  /** Length of the full output, once completed. */
  outputChars?: number;
}

/** What `runDetail` returns. */
export interface RunDetail extends RunSummary {
  name?: string;
  inputs: Record<string, unknown>;
  concurrency: number;
  defaultAgentId?: string;
  cancelRequested: boolean;
  /** How many times the run was resumed after a restart. */
  resumedCount: number;
  counts: Record<NodeStatus, number>;
  nodes: RunDetailNode[];
}

/** Options of {@link GraphService.execute}. */
export interface ExecuteOptions {
  /** Who asked; reported in `pipeline:authored`. @default { origin: 'rpc' } */
  author?: GraphAuthor | undefined;
  /** Agent for nodes that name none. */
  defaultAgentId?: string | undefined;
  /**
   * The agent-to-agent gate: given the agents the run would act as, false refuses the run
   * with `POLICY_DENIED` (and the authoring is reported as excluded).
   */
  authorize?: ((agentIds: string[]) => boolean | Promise<boolean>) | undefined;
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
  /** Saves a defined graph under a name (replacing an earlier graph of that name). */
  save(graphId: string, name: string): Promise<SavedGraph & { graphId: string }>;
  /** Defines a fresh graph from a saved one. */
  load(name: string): Promise<DefinedGraph & { name: string }>;
  /** Saved graphs by name. */
  list(): Promise<{ graphs: SavedGraph[] }>;
  /** Deletes a saved graph only; definitions and runs stay. */
  delete(name: string): Promise<{ deleted: true; name: string }>;
  /** Runs, newest first. */
  runs(filter?: {
    graphId?: string | undefined;
    limit?: number | undefined;
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

interface ActiveRun {
  runId: string;
  graphId: string;
  startedAt: number;
  graph: CompiledGraph;
  execution: GraphExecution;
  finished: Promise<RunStatus>;
}

const executeParamsSchema = z
  .object({
    graphId: z.string().regex(entityIdPattern, 'graph id: 1-128 letters, digits, _ or -'),
    inputs: z
      .record(z.string(), z.unknown())
      .refine((value) => jsonLength(value) <= 1_048_576, 'inputs must serialise to at most 1 MiB of JSON')
      .optional(),
    concurrency: z.number().int().min(1).optional(),
  })
  .strict();

// Stored definitions were validated when defined; a later, lower limit must not strand them.
const storedLimits: GraphLimits = {
  maxNodes: Number.MAX_SAFE_INTEGER,
  maxPromptChars: Number.MAX_SAFE_INTEGER,
  maxRetries: Number.MAX_SAFE_INTEGER,
  maxTimeoutMs: Number.MAX_SAFE_INTEGER,
};

/**
 * Creates the durable graph service: definitions, saved graphs and runs in the database,
 * each node's output in `<runsDir>/<runId>/<nodeId>.txt`. Call `start()` before use.
 */
export function createGraphService(options: GraphServiceOptions): GraphService {
  const parsedOptions = optionsSchema.safeParse(options);
  if (!parsedOptions.success) {
    throw new GraphError('INVALID_OPTIONS', `createGraphService: ${parsedOptions.error.issues[0]?.message}`, {
      data: { issues: parsedOptions.error.issues },
    });
  }
  let settings = parsedOptions.data;
  const db = options.db;
  const executor = options.executor;
  const events = options.events ?? noopEventSink;
  const capabilityClassOf = options.capabilityClassOf ?? (() => 'unknown' as const);
  const logger = options.logger ?? noopLogger;
  const now = options.now ?? Date.now;
  const randomId = options.randomId ?? randomUUID;
  const files = new OutputFiles(options.runsDir);
  const active = new Map<string, ActiveRun>();
  const memory = new Map<string, Map<string, string>>();
  let batcher: GraphWriteBatcher | undefined;
  let started = false;
  let closed = false;

  const ready = (): GraphWriteBatcher => {
    if (closed) throw new GraphError('CLOSED', 'the graph service is closed');
    if (!started || !batcher) throw new GraphError('CLOSED', 'the graph service was not started');
    return batcher;
  };

  const emitAuthored = (
    payload: Omit<PipelineAuthoredPayload, 'agentId' | 'capabilityClass' | 'origin' | 'timestamp'>,
    author: GraphAuthor,
  ) => {
    const agentId = author.agentId ?? null;
    const event: PipelineAuthoredPayload = {
      ...payload,
      origin: author.origin,
      agentId,
      capabilityClass: agentId === null ? 'unknown' : safeClass(capabilityClassOf, agentId),
      timestamp: now(),
    };
    try {
      events.emit(PIPELINE_AUTHORED, event as unknown as Record<string, unknown>);
    } catch (error) {
      logger.warn({ err: error, hint: 'check the event sink', errorKind: 'internal' }, 'event sink threw');
    }
  };

  const remember = (runId: string, outputs: Map<string, string>) => {
    if (settings.memoryRuns === 0) return;
    memory.delete(runId);
    memory.set(runId, outputs);
    while (memory.size > settings.memoryRuns) {
      const oldest = memory.keys().next().value as string;
      memory.delete(oldest);
    }
  };

  const loadRun = async (runId: string): Promise<RunRow> => {
    const row = entityIdPattern.test(runId)
      ? await db.get<RunRow>('SELECT * FROM graph_runs WHERE run_id = ?', [runId])
      : undefined;
    if (!row) throw new GraphError('RUN_NOT_FOUND', `Run not found: ${runId}`, { data: { runId } });
    return row;
  };

  const loadNodes = (runId: string): Promise<NodeRow[]> =>
    db.query<NodeRow>('SELECT * FROM graph_run_nodes WHERE run_id = ? ORDER BY position', [runId]);

  const startRun = (
    runId: string,
    graphId: string,
    startedAt: number,
    graph: CompiledGraph,
    inputs: Record<string, unknown>,
    concurrency: number,
    defaultAgentId: string | undefined,
    resumeFrom: ReadonlyMap<string, NodeState> | undefined,
    cancelled: boolean,
  ): ActiveRun => {
    const writer = ready();
    const update = (sql: string, args: GraphSqlValue[]) =>
      writer.write(sql, args).catch((error: unknown) => {
        logger.error(
          {
            err: error,
            runId,
            hint: 'check the database; the run resumes from its last recorded state',
            errorKind: 'resource',
          },
          'graph run progress write failed',
        );
      });
    const execution = executeGraph({
      graph,
      executor: executor!,
      inputs,
      concurrency,
      defaultTimeoutMs: settings.defaultNodeTimeoutMs,
      retryDelayMs: settings.retryDelayMs,
      runId,
      graphId,
      defaultAgentId,
      resumeFrom,
      cancelled,
      now,
      listener: {
        nodeStarted: (nodeId, state) => {
          void update(
            "UPDATE graph_run_nodes SET status = 'running', attempts = ?, started_at = ? WHERE run_id = ? AND node_id = ?",
            [state.attempts, state.startedAt ?? now(), runId, nodeId],
          );
        },
        nodeSettled: async (nodeId, state) => {
          if (state.status === 'completed') {
            const output = state.output ?? '';
            try {
              // The file first: a node is recorded complete only once its output is on disk.
              await files.write(runId, nodeId, output);
            } catch (error) {
              logger.error(
                {
                  err: error,
                  runId,
                  nodeId,
                  hint: 'check space and permissions of the graph-runs directory',
                  errorKind: 'resource',
                },
                'graph node output could not be written',
              );
              return;
            }
            await update(
              "UPDATE graph_run_nodes SET status = 'completed', attempts = ?, finished_at = ?, error = NULL, output_preview = ?, output_chars = ? WHERE run_id = ? AND node_id = ?",
              [
                state.attempts,
                state.finishedAt ?? now(),
                output.slice(0, STATUS_OUTPUT_LIMIT),
                output.length,
                runId,
                nodeId,
              ],
            );
            return;
          }
          await update(
            'UPDATE graph_run_nodes SET status = ?, attempts = ?, finished_at = ?, error = ? WHERE run_id = ? AND node_id = ?',
            [state.status, state.attempts, state.finishedAt ?? now(), state.error ?? null, runId, nodeId],
          );
        },
      },
    });
    const finished = execution.done.then(async (outcome: ExecutionOutcome): Promise<RunStatus> => {
      const outputs = new Map<string, string>();
      for (const node of graph.nodes) {
        const output = execution.output(node.id);
        if (output !== undefined) outputs.set(node.id, output);
      }
      if (outcome === 'interrupted') {
        active.delete(runId);
        return 'running';
      }
      try {
        await writer.flush();
        await db.execute('UPDATE graph_runs SET status = ?, finished_at = ? WHERE run_id = ?', [
          outcome,
          now(),
          runId,
        ]);
      } catch (error) {
        logger.error(
          {
            err: error,
            runId,
            hint: 'check the database; the run resumes from its last recorded state',
            errorKind: 'resource',
          },
          'graph run final status write failed',
        );
      }
      remember(runId, outputs);
      active.delete(runId);
      logger.info({ runId, graphId, status: outcome, durationMs: now() - startedAt }, 'graph run finished');
      return outcome;
    });
    const run: ActiveRun = { runId, graphId, startedAt, graph, execution, finished };
    active.set(runId, run);
    return run;
  };

  const liveNode = (run: ActiveRun, nodeId: string): NodeState | undefined => run.execution.node(nodeId);

  const service: GraphService = {
    get canExecute() {
      return executor !== undefined;
    },

    async start() {
      if (started) return { resumed: 0 };
      await db.migrate(MIGRATION_PACKAGE, migrations);
      // A short delay: dependants wait for their dependency's record, so batching trades latency.
      batcher = db.createWriteBatcher({ maxBatch: 500, maxDelayMs: 1 });
      started = true;
      const unfinished = await db.query<RunRow>(
        "SELECT * FROM graph_runs WHERE status IN ('pending', 'running') ORDER BY started_at",
      );
      if (unfinished.length === 0) return { resumed: 0 };
      if (!executor) {
        logger.warn(
          {
            runs: unfinished.length,
            hint: 'configure an agent runtime (or a graph executor) and restart to resume them',
            errorKind: 'dependency',
          },
          'unfinished graph runs not resumed: no node executor',
        );
        return { resumed: 0 };
      }
      let resumed = 0;
      for (const row of unfinished) {
        const graph = compileGraph(JSON.parse(row.definition), storedLimits);
        const resumeFrom = new Map<string, NodeState>();
        for (const node of await loadNodes(row.run_id)) {
          const state: NodeState = {
            status: node.status as NodeStatus,
            attempts: node.attempts,
            startedAt: node.started_at ?? undefined,
            finishedAt: node.finished_at ?? undefined,
            error: node.error ?? undefined,
          };
          if (node.status === 'completed') {
            const output = await files.read(row.run_id, node.node_id);
            // A completed node without its file runs again rather than feeding '' onwards.
            if (output === undefined) state.status = 'pending';
            else state.output = output;
          }
          resumeFrom.set(node.node_id, state);
        }
        await files.prepare(row.run_id);
        await db.transaction(async (tx) => {
          await tx.execute(
            "UPDATE graph_run_nodes SET status = 'pending' WHERE run_id = ? AND status NOT IN ('completed', 'failed', 'skipped')",
            [row.run_id],
          );
          for (const [nodeId, state] of resumeFrom) {
            if (state.status === 'pending') {
              await tx.execute(
                "UPDATE graph_run_nodes SET status = 'pending' WHERE run_id = ? AND node_id = ?",
                [row.run_id, nodeId],
              );
            }
          }
          await tx.execute(
            "UPDATE graph_runs SET status = 'running', resumed_count = resumed_count + 1 WHERE run_id = ?",
            [row.run_id],
          );
        });
        startRun(
          row.run_id,
          row.graph_id,
          row.started_at,
          graph,
          JSON.parse(row.inputs) as Record<string, unknown>,
          row.concurrency,
          row.default_agent_id ?? undefined,
          resumeFrom,
          row.cancel_requested === 1,
        );
        resumed++;
        const completed = [...resumeFrom.values()].filter((state) => state.status === 'completed').length;
        logger.info(
          {
            runId: row.run_id,
            graphId: row.graph_id,
            completedNodes: completed,
            nodeCount: graph.nodes.length,
          },
          'graph run resumed',
        );
      }
      return { resumed };
    },

    async define(input, author = { origin: 'rpc' }) {
      ready();
      const nodes = (input as { nodes?: unknown } | null | undefined)?.nodes;
      const empty = nodes === undefined || (Array.isArray(nodes) && nodes.length === 0);
      let graph: CompiledGraph;
      try {
        graph = compileGraph(input, settings.limits);
      } catch (error) {
        if (error instanceof GraphError) {
          emitAuthored(
            {
              action: 'define',
              valid: false,
              nodeCount: Array.isArray(nodes) ? nodes.length : 0,
              invalidReason: error.data?.stage === 'parse' ? 'parse' : 'validation',
              ...(empty ? { excluded: 'empty_define' as const } : {}),
            },
            author,
          );
        }
        throw error;
      }
      const graphId = randomId();
      await db.execute(
        'INSERT INTO graph_definitions (graph_id, name, definition, node_count, created_at) VALUES (?, ?, ?, ?, ?)',
        [graphId, graph.name ?? null, JSON.stringify(graph.definition), graph.nodes.length, now()],
      );
      emitAuthored({ action: 'define', valid: true, nodeCount: graph.nodes.length, graphId }, author);
      return { graphId, nodeCount: graph.nodes.length };
    },

    async execute(input, executeOptions = {}) {
      const writer = ready();
      const author = executeOptions.author ?? { origin: 'rpc' };
      const parsed = executeParamsSchema.safeParse(input);
      if (!parsed.success) {
        emitAuthored({ action: 'execute', valid: false, nodeCount: 0, invalidReason: 'parse' }, author);
        throw argumentError(parsed.error.issues);
      }
      const { graphId, inputs = {}, concurrency = settings.defaultConcurrency } = parsed.data;
      if (concurrency > settings.maxConcurrency) {
        emitAuthored(
          { action: 'execute', valid: false, nodeCount: 0, invalidReason: 'parse', graphId },
          author,
        );
        throw new GraphError(
          'INVALID_ARGUMENT',
          `Invalid params: concurrency: at most ${settings.maxConcurrency}`,
          {
            data: {
              issues: [
                { path: ['concurrency'], code: 'too_big', message: `at most ${settings.maxConcurrency}` },
              ],
            },
          },
        );
      }
      const row = await db.get<{ definition: string; name: string | null }>(
        'SELECT definition, name FROM graph_definitions WHERE graph_id = ?',
        [graphId],
      );
      if (!row) {
        emitAuthored(
          { action: 'execute', valid: false, nodeCount: 0, invalidReason: 'not_found', graphId },
          author,
        );
        throw new GraphError('GRAPH_NOT_FOUND', `Graph not found: ${graphId}`, { data: { graphId } });
      }
      const definition = JSON.parse(row.definition) as GraphDefinition;
      const graph = compileGraph(definition, storedLimits);
      const agentIds = [
        ...new Set(
          graph.nodes
            .map((node) => node.agentId ?? executeOptions.defaultAgentId)
            .filter((agentId): agentId is string => agentId !== undefined),
        ),
      ];
      if (executeOptions.authorize && !(await executeOptions.authorize(agentIds))) {
        emitAuthored(
          {
            action: 'execute',
            valid: true,
            nodeCount: graph.nodes.length,
            excluded: 'policy_rejected',
            graphId,
          },
          author,
        );
        throw new GraphError(
          'POLICY_DENIED',
          'the agent-to-agent policy does not allow running these agents',
          {
            data: { agentIds },
          },
        );
      }
      if (!executor) {
        emitAuthored({ action: 'execute', valid: true, nodeCount: graph.nodes.length, graphId }, author);
        throw new GraphError(
          'EXECUTOR_UNAVAILABLE',
          'Agent runtime is not available: graph nodes cannot run',
        );
      }
      const runId = randomId();
      const startedAt = now();
      await files.prepare(runId);
      await db.transaction(async (tx) => {
        await tx.execute(
          `INSERT INTO graph_runs (run_id, graph_id, status, definition, node_count, inputs, concurrency, default_agent_id, started_at)
           VALUES (?, ?, 'pending', ?, ?, ?, ?, ?, ?)`,
          [
            runId,
            graphId,
            row.definition,
            graph.nodes.length,
            JSON.stringify(inputs),
            concurrency,
            executeOptions.defaultAgentId ?? null,
            startedAt,
          ],
        );
        // One multi-row insert per chunk keeps a 1,000-node run to a few statements.
        for (let offset = 0; offset < graph.nodes.length; offset += 200) {
          const chunk = graph.nodes.slice(offset, offset + 200);
          await tx.execute(
            `INSERT INTO graph_run_nodes (run_id, node_id, position, status) VALUES ${chunk.map(() => "(?, ?, ?, 'pending')").join(', ')}`,
            chunk.flatMap((node) => [runId, node.id, node.index]),
          );
        }
      });
      await writer.write("UPDATE graph_runs SET status = 'running' WHERE run_id = ?", [runId]);
      startRun(
        runId,
        graphId,
        startedAt,
        graph,
        inputs,
        concurrency,
        executeOptions.defaultAgentId,
        undefined,
        false,
      );
      emitAuthored({ action: 'execute', valid: true, nodeCount: graph.nodes.length, graphId, runId }, author);
      logger.info({ runId, graphId, nodeCount: graph.nodes.length, concurrency }, 'graph run started');
      return { runId };
    },

    async status(runId) {
      ready();
      const run = active.get(runId);
      if (run) {
        return {
          runId,
          graphId: run.graphId,
          status: 'running',
          startedAt: run.startedAt,
          nodes: run.execution
            .nodes()
            .map((node) => statusNode(node.id, node.status, node.output, node.error)),
        };
      }
      const row = await loadRun(runId);
      const nodes = await loadNodes(runId);
      return {
        runId,
        graphId: row.graph_id,
        status: row.status as RunStatus,
        startedAt: row.started_at,
        ...(row.finished_at === null ? {} : { finishedAt: row.finished_at }),
        nodes: nodes.map((node) =>
          statusNode(
            node.node_id,
            node.status as NodeStatus,
            node.output_preview ?? undefined,
            node.error ?? undefined,
          ),
        ),
      };
    },

    async outputs(runId, nodeIds) {
      ready();
      const run = active.get(runId);
      const cached = memory.get(runId);
      let ids: string[];
      if (run) {
        ids = nodeIds ?? run.graph.nodes.map((node) => node.id);
        checkNodes(ids, (id) => run.graph.indexOf.has(id));
        const outputs: Record<string, string | null> = {};
        for (const id of ids) outputs[id] = truncate(liveNode(run, id)?.output, OUTPUT_VALUE_LIMIT);
        return { outputs, source: 'memory' };
      }
      await loadRun(runId);
      const rows = await loadNodes(runId);
      const byId = new Map(rows.map((row) => [row.node_id, row]));
      ids = nodeIds ?? rows.map((row) => row.node_id);
      checkNodes(ids, (id) => byId.has(id));
      const outputs: Record<string, string | null> = {};
      if (cached) {
        for (const id of ids) outputs[id] = truncate(cached.get(id), OUTPUT_VALUE_LIMIT);
        memory.delete(runId);
        memory.set(runId, cached);
        return { outputs, source: 'memory' };
      }
      for (const id of ids) {
        if (byId.get(id)?.status !== 'completed') {
          outputs[id] = null;
          continue;
        }
        let text: string | undefined;
        try {
          text = await files.read(runId, id);
        } catch (error) {
          logger.warn(
            {
              err: error,
              runId,
              nodeId: id,
              hint: 'check permissions of the graph-runs directory',
              errorKind: 'resource',
            },
            'graph node output unreadable',
          );
        }
        if (text === undefined) {
          logger.warn(
            {
              runId,
              nodeId: id,
              hint: 'the output file was removed from the graph-runs directory',
              errorKind: 'resource',
            },
            'graph node output file missing',
          );
        }
        outputs[id] = truncate(text, OUTPUT_VALUE_LIMIT);
      }
      return { outputs, source: 'disk' };
    },

    async cancel(runId) {
      ready();
      const run = active.get(runId);
      if (run) {
        const accepted = run.execution.cancel();
        if (accepted)
          await db.execute('UPDATE graph_runs SET cancel_requested = 1 WHERE run_id = ?', [runId]);
        const status = run.execution.status;
        return {
          runId,
          status: status === 'running' || status === 'interrupted' ? 'running' : status,
          cancelled: accepted,
        };
      }
      const row = await loadRun(runId);
      if (row.status !== 'pending' && row.status !== 'running') {
        return { runId, status: row.status as RunStatus, cancelled: false };
      }
      // An unfinished run no process is executing (no executor at start): finish it here.
      const at = now();
      await db.transaction(async (tx) => {
        await tx.execute(
          "UPDATE graph_run_nodes SET status = 'cancelled', finished_at = ?, error = 'run cancelled before the node started' WHERE run_id = ? AND status NOT IN ('completed', 'failed', 'skipped')",
          [at, runId],
        );
        await tx.execute(
          "UPDATE graph_runs SET status = 'cancelled', cancel_requested = 1, finished_at = ? WHERE run_id = ?",
          [at, runId],
        );
      });
      return { runId, status: 'cancelled', cancelled: true };
    },

    async save(graphId, name) {
      ready();
      checkName(name);
      const row = entityIdPattern.test(graphId)
        ? await db.get<{ definition: string; node_count: number }>(
            'SELECT definition, node_count FROM graph_definitions WHERE graph_id = ?',
            [graphId],
          )
        : undefined;
      if (!row) throw new GraphError('GRAPH_NOT_FOUND', `Graph not found: ${graphId}`, { data: { graphId } });
      const createdAt = now();
      await db.execute(
        `INSERT INTO graph_saved (name, source_graph_id, definition, node_count, created_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (name) DO UPDATE SET source_graph_id = excluded.source_graph_id, definition = excluded.definition,
           node_count = excluded.node_count, created_at = excluded.created_at`,
        [name, graphId, row.definition, row.node_count, createdAt],
      );
      return { name, graphId, createdAt, nodeCount: row.node_count };
    },

    async load(name) {
      ready();
      const row = await db.get<{ definition: string; node_count: number }>(
        'SELECT definition, node_count FROM graph_saved WHERE name = ?',
        [name],
      );
      if (!row) throw new GraphError('SAVED_GRAPH_NOT_FOUND', `Graph not found: ${name}`, { data: { name } });
      const graphId = randomId();
      await db.execute(
        'INSERT INTO graph_definitions (graph_id, name, definition, node_count, created_at) VALUES (?, ?, ?, ?, ?)',
        [graphId, name, row.definition, row.node_count, now()],
      );
      return { graphId, nodeCount: row.node_count, name };
    },

    async list() {
      ready();
      const rows = await db.query<{ name: string; created_at: number; node_count: number }>(
        'SELECT name, created_at, node_count FROM graph_saved ORDER BY name',
      );
      return {
        graphs: rows.map((row) => ({ name: row.name, createdAt: row.created_at, nodeCount: row.node_count })),
      };
    },

    async delete(name) {
      ready();
      const result = (await db.execute('DELETE FROM graph_saved WHERE name = ?', [name])) as {
        rowsAffected?: number;
      };
      if (!result.rowsAffected)
        throw new GraphError('SAVED_GRAPH_NOT_FOUND', `Graph not found: ${name}`, { data: { name } });
      return { deleted: true, name };
    },

    async runs(filter = {}) {
      ready();
      const limit = Math.min(Math.max(filter.limit ?? 50, 1), 500);
      const rows =
        filter.graphId === undefined
          ? await db.query<RunRow>('SELECT * FROM graph_runs ORDER BY started_at DESC, rowid DESC LIMIT ?', [
              limit,
            ])
          : await db.query<RunRow>(
              'SELECT * FROM graph_runs WHERE graph_id = ? ORDER BY started_at DESC, rowid DESC LIMIT ?',
              [filter.graphId, limit],
            );
      return { runs: rows.map((row) => summary(row, active.has(row.run_id))) };
    },

    async runDetail(runId) {
      ready();
      const row = await loadRun(runId);
      const rows = await loadNodes(runId);
      const run = active.get(runId);
      const definition = JSON.parse(row.definition) as GraphDefinition;
      const byId = new Map(definition.nodes.map((node) => [node.id, node]));
      const counts: Record<NodeStatus, number> = {
        pending: 0,
        running: 0,
        completed: 0,
        failed: 0,
        skipped: 0,
        cancelled: 0,
      };
      const nodes = rows.map((nodeRow): RunDetailNode => {
        const live = run ? liveNode(run, nodeRow.node_id) : undefined;
        const spec = byId.get(nodeRow.node_id);
        const status = live?.status ?? (nodeRow.status as NodeStatus);
        counts[status]++;
        const error = live ? live.error : (nodeRow.error ?? undefined);
        const startedAt = live ? live.startedAt : (nodeRow.started_at ?? undefined);
        const finishedAt = live ? live.finishedAt : (nodeRow.finished_at ?? undefined);
        const outputChars = live ? live.output?.length : (nodeRow.output_chars ?? undefined);
        return {
          id: nodeRow.node_id,
          ...(spec?.agentId ? { agentId: spec.agentId } : {}),
          dependsOn: spec?.dependsOn ?? [],
          status,
          attempts: live?.attempts ?? nodeRow.attempts,
          ...(startedAt === undefined ? {} : { startedAt }),
          ...(finishedAt === undefined ? {} : { finishedAt }),
          ...(error === undefined ? {} : { error }),
          ...(outputChars === undefined ? {} : { outputChars }),
        };
      });
      return {
        ...summary(row, run !== undefined),
        ...(definition.name ? { name: definition.name } : {}),
        inputs: JSON.parse(row.inputs) as Record<string, unknown>,
        concurrency: row.concurrency,
        ...(row.default_agent_id ? { defaultAgentId: row.default_agent_id } : {}),
        cancelRequested: row.cancel_requested === 1,
        resumedCount: row.resumed_count,
        counts,
        nodes,
      };
    },

    async deleteRun(runId) {
      ready();
      const row = await loadRun(runId);
      if (active.has(runId) || row.status === 'pending' || row.status === 'running') {
        throw new GraphError(
          'RUN_ACTIVE',
          `Run is still ${row.status === 'pending' ? 'pending' : 'running'}: ${runId}`,
          {
            data: { runId, status: row.status },
          },
        );
      }
      await db.transaction(async (tx) => {
        await tx.execute('DELETE FROM graph_run_nodes WHERE run_id = ?', [runId]);
        await tx.execute('DELETE FROM graph_runs WHERE run_id = ?', [runId]);
      });
      memory.delete(runId);
      try {
        await files.remove(runId);
      } catch (error) {
        logger.warn(
          {
            err: error,
            runId,
            hint: 'remove the run folder under graph-runs by hand',
            errorKind: 'resource',
          },
          'graph run files could not be removed',
        );
      }
      return { deleted: true, runId };
    },

    async waitForRun(runId) {
      const run = active.get(runId);
      if (run) return run.finished;
      const row = await loadRun(runId);
      return row.status as RunStatus;
    },

    evictMemory(runId) {
      if (runId === undefined) memory.clear();
      else memory.delete(runId);
    },

    async close() {
      if (closed) return;
      const runs = [...active.values()];
      for (const run of runs) run.execution.interrupt();
      await Promise.all(runs.map((run) => run.finished));
      closed = true;
      await batcher?.close();
    },

    applyConfig(section) {
      settings = { ...settings, ...settingsFromSection(section) };
    },
  };
  return service;
}

function statusNode(
  id: string,
  status: NodeStatus,
  output: string | undefined,
  error: string | undefined,
): RunStatusNode {
  return {
    id,
    status,
    ...(status === 'completed' && output !== undefined
      ? { output: output.slice(0, STATUS_OUTPUT_LIMIT) }
      : {}),
    ...(error === undefined ? {} : { error }),
  };
}

function summary(row: RunRow, isActive: boolean): RunSummary {
  return {
    runId: row.run_id,
    graphId: row.graph_id,
    status: (isActive ? 'running' : row.status) as RunStatus,
    startedAt: row.started_at,
    ...(row.finished_at === null ? {} : { finishedAt: row.finished_at }),
    nodeCount: row.node_count,
  };
}

function truncate(value: string | undefined, limit: number): string | null {
  if (value === undefined) return null;
  return value.length > limit ? value.slice(0, limit) : value;
}

function checkNodes(ids: readonly string[], exists: (id: string) => boolean): void {
  const missing = ids.find((id) => !exists(id));
  if (missing !== undefined)
    throw new GraphError('NODE_NOT_FOUND', `Node not found: ${missing}`, { data: { nodeId: missing } });
}

function checkName(name: string): void {
  if (!savedNamePattern.test(name)) {
    throw new GraphError(
      'INVALID_ARGUMENT',
      'Invalid params: name: 1-128 characters without control characters',
      {
        data: {
          issues: [
            {
              path: ['name'],
              code: 'invalid_format',
              message: '1-128 characters without control characters',
            },
          ],
        },
      },
    );
  }
}

function argumentError(issues: readonly z.core.$ZodIssue[]): GraphError {
  const reduced = issues.map((issue) => ({
    path: issue.path.map((key) => (typeof key === 'number' ? key : String(key))),
    code: issue.code,
    message: issue.message,
  }));
  const summaryText = reduced
    .map((issue) => `${issue.path.join('.') || 'params'}: ${issue.message}`)
    .join('; ');
  return new GraphError('INVALID_ARGUMENT', `Invalid params: ${summaryText}`, { data: { issues: reduced } });
}

function jsonLength(value: unknown): number {
  try {
    return JSON.stringify(value)?.length ?? 0;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

function safeClass(classOf: (agentId: string) => CapabilityClass, agentId: string): CapabilityClass {
  try {
    return classOf(agentId);
  } catch {
    return 'unknown';
  }
}
