import { z } from 'zod';
import type { GraphQueryable, GraphSqlValue } from '../database.js';
import { type CompiledGraph, compileGraph, type GraphDefinition } from '../definition.js';
import { GraphError } from '../errors.js';
import type { GraphService } from '../service.js';
import {
  executeGraph,
  type ExecutionOutcome,
  type NodeState,
  type NodeStatus,
  type RunStatus,
} from '../execute.js';
import { entityIdPattern, type ExecuteOptions, STATUS_OUTPUT_LIMIT } from '../graph-types.js';
import {
  type ActiveRun,
  emitAuthored,
  type GraphContext,
  loadNodes,
  loadRun,
  ready,
  remember,
  storedLimits,
} from './graph-context.js';
import {
  cancelElsewhere,
  claimOrphans,
  fencedWrite,
  loseRun,
  PG_NOW_MS,
  startClusterLoop,
} from './cluster-runs.js';
import { OutputTable } from './output-files.js';
import { MIGRATION_PACKAGE, migrationSet, type RunRow } from './schema.js';

// The run executor: starting runs, resuming unfinished ones at start, cancelling.

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

/** What {@link startRun} starts: a new run, or one a previous process left unfinished. */
export interface RunStart {
  runId: string;
  graphId: string;
  startedAt: number;
  graph: CompiledGraph;
  inputs: Record<string, unknown>;
  concurrency: number;
  defaultAgentId: string | undefined;
  /** The tenant the run belongs to (its nodes run in the tenant's sessions). */
  tenant: string | undefined;
  /** Node states recorded before a restart; undefined for a new run. */
  resumeFrom: ReadonlyMap<string, NodeState> | undefined;
  /** Whether a cancel was requested before the restart. */
  cancelled: boolean;
}

/** Starts (or resumes) executing a run, recording each node's progress and the outcome. */
export function startRun(ctx: GraphContext, start: RunStart): ActiveRun {
  const { runId, graphId, startedAt, graph, inputs, concurrency, defaultAgentId, tenant } = start;
  const { resumeFrom, cancelled } = start;
  const writer = ready(ctx);
  const { cluster } = ctx;
  const writeFailed = (error: unknown) => {
    ctx.logger.error(
      {
        err: error,
        runId,
        hint: 'check the database; the run resumes from its last recorded state',
        errorKind: 'resource',
      },
      'graph run progress write failed',
    );
  };
  // In a cluster each write is fenced: one refused means another instance owns the run now.
  const fenced = async (write: (tx: GraphQueryable) => Promise<void>) => {
    if (!cluster) return;
    const kept = await fencedWrite(ctx, cluster, runId, write).catch((error: unknown) => {
      writeFailed(error);
      return true;
    });
    if (!kept) loseRun(ctx, cluster, runId);
  };
  const update = (sql: string, args: GraphSqlValue[]) =>
    cluster
      ? fenced(async (tx) => void (await tx.execute(sql, args)))
      : writer.write(sql, args).catch(writeFailed);
  const execution = executeGraph({
    graph,
    executor: ctx.executor!,
    inputs,
    concurrency,
    defaultTimeoutMs: ctx.settings.defaultNodeTimeoutMs,
    retryDelayMs: ctx.settings.retryDelayMs,
    runId,
    graphId,
    defaultAgentId,
    ...(tenant === undefined ? {} : { tenant }),
    resumeFrom,
    cancelled,
    now: ctx.now,
    listener: {
      nodeStarted: (nodeId, state) => {
        void update(
          "UPDATE graph_run_nodes SET status = 'running', attempts = ?, started_at = ? WHERE run_id = ? AND node_id = ?",
          [state.attempts, state.startedAt ?? ctx.now(), runId, nodeId],
        );
      },
      nodeSettled: async (nodeId, state) => {
        if (state.status === 'completed' && cluster) {
          const output = state.output ?? '';
          // The output and the node's record commit together, at this instance's fence.
          await fenced(async (tx) => {
            await OutputTable.write(tx, runId, nodeId, output);
            await tx.execute(completedNodeSql, completedNodeArgs(ctx, runId, nodeId, state, output));
          });
          return;
        }
        if (state.status === 'completed') {
          const output = state.output ?? '';
          try {
            // The file first: a node is recorded complete only once its output is on disk.
            await ctx.files.write(runId, nodeId, output);
          } catch (error) {
            ctx.logger.error(
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
          await update(completedNodeSql, completedNodeArgs(ctx, runId, nodeId, state, output));
          return;
        }
        await update(
          'UPDATE graph_run_nodes SET status = ?, attempts = ?, finished_at = ?, error = ? WHERE run_id = ? AND node_id = ?',
          [state.status, state.attempts, state.finishedAt ?? ctx.now(), state.error ?? null, runId, nodeId],
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
      if (ctx.active.get(runId) === run) ctx.active.delete(runId);
      return 'running';
    }
    try {
      if (cluster) {
        if (!(await finishOwned(ctx, runId, outcome))) {
          if (ctx.active.get(runId) === run) ctx.active.delete(runId);
          return 'running';
        }
      } else {
        await writer.flush();
        await ctx.db.execute('UPDATE graph_runs SET status = ?, finished_at = ? WHERE run_id = ?', [
          outcome,
          ctx.now(),
          runId,
        ]);
      }
    } catch (error) {
      ctx.logger.error(
        {
          err: error,
          runId,
          hint: 'check the database; the run resumes from its last recorded state',
          errorKind: 'resource',
        },
        'graph run final status write failed',
      );
    }
    remember(ctx, runId, outputs);
    if (ctx.active.get(runId) === run) ctx.active.delete(runId);
    ctx.logger.info(
      { runId, graphId, status: outcome, durationMs: ctx.now() - startedAt },
      'graph run finished',
    );
    return outcome;
  });
  const run: ActiveRun = { runId, graphId, startedAt, graph, execution, finished };
  ctx.active.set(runId, run);
  return run;
}

const completedNodeSql =
  "UPDATE graph_run_nodes SET status = 'completed', attempts = ?, finished_at = ?, error = NULL, output_preview = ?, output_chars = ? WHERE run_id = ? AND node_id = ?";

function completedNodeArgs(
  ctx: GraphContext,
  runId: string,
  nodeId: string,
  state: NodeState,
  output: string,
): GraphSqlValue[] {
  return [
    state.attempts,
    state.finishedAt ?? ctx.now(),
    output.slice(0, STATUS_OUTPUT_LIMIT),
    output.length,
    runId,
    nodeId,
  ];
}

/**
 * The owner's final write in a cluster: the run's outcome, applied (and the ownership released)
 * only at this instance's fence, after its earlier writes. False when the run was taken over.
 */
async function finishOwned(ctx: GraphContext, runId: string, outcome: RunStatus): Promise<boolean> {
  const cluster = ctx.cluster!;
  const fence = cluster.fences.get(runId);
  await cluster.tails.get(runId);
  cluster.tails.delete(runId);
  cluster.fences.delete(runId);
  const written =
    fence !== undefined &&
    (await cluster.rows.complete(runId, fence, {
      set: 'status = ?, finished_at = ?',
      args: [outcome, ctx.now()],
    }));
  if (!written) loseRun(ctx, cluster, runId);
  return written;
}

/**
 * Migrates, opens the write batcher and resumes unfinished runs (when an executor is set): on
 * one instance every one; in a cluster only those nobody holds, now and whenever an owner dies.
 */
export async function resumeRuns(ctx: GraphContext): ReturnType<GraphService['start']> {
  if (ctx.started) return { resumed: 0 };
  await ctx.db.migrate(MIGRATION_PACKAGE, migrationSet);
  // A short delay: dependants wait for their dependency's record, so batching trades latency.
  ctx.batcher = ctx.db.createWriteBatcher({ maxBatch: 500, maxDelayMs: 1 });
  ctx.started = true;
  const { cluster } = ctx;
  if (cluster) {
    const resumed = ctx.executor ? await takeOver(ctx) : 0;
    startClusterLoop(ctx, cluster, () => (ctx.executor ? takeOver(ctx) : Promise.resolve(0)));
    if (!ctx.executor) await warnNotResumed(ctx);
    return { resumed };
  }
  const unfinished = await ctx.db.query<RunRow>(
    "SELECT * FROM graph_runs WHERE status IN ('pending', 'running') ORDER BY started_at",
  );
  if (unfinished.length === 0) return { resumed: 0 };
  if (!ctx.executor) {
    await warnNotResumed(ctx, unfinished.length);
    return { resumed: 0 };
  }
  for (const row of unfinished) await resumeRun(ctx, row);
  return { resumed: unfinished.length };
}

/** Claims and resumes the runs whose owner is gone (cluster mode). */
async function takeOver(ctx: GraphContext): Promise<number> {
  let resumed = 0;
  for (const row of await claimOrphans(ctx.cluster!)) {
    // This instance lost the run earlier and took it back: its old execution winds down first.
    await ctx.active.get(row.run_id)?.finished;
    if (ctx.closed) break;
    await resumeRun(ctx, row);
    resumed++;
  }
  return resumed;
}

async function warnNotResumed(ctx: GraphContext, count?: number): Promise<void> {
  const runs =
    count ??
    Number(
      (
        await ctx.db.get<{ n: number }>(
          "SELECT COUNT(*) AS n FROM graph_runs WHERE status IN ('pending', 'running')",
        )
      )?.n ?? 0,
    );
  if (runs === 0) return;
  ctx.logger.warn(
    {
      runs,
      hint: 'configure an agent runtime (or a graph executor) and restart to resume them',
      errorKind: 'dependency',
    },
    'unfinished graph runs not resumed: no node executor',
  );
}

/** Resumes one unfinished run: completed nodes keep their outputs, the rest run again. */
async function resumeRun(ctx: GraphContext, row: RunRow): Promise<void> {
  const graph = compileGraph(JSON.parse(row.definition), storedLimits);
  const resumeFrom = new Map<string, NodeState>();
  const nodes = await loadNodes(ctx, row.run_id);
  const kept = await ctx.outputs.readAll(
    row.run_id,
    nodes.filter((node) => node.status === 'completed').map((node) => node.node_id),
  );
  for (const node of nodes) {
    const state: NodeState = {
      status: node.status as NodeStatus,
      attempts: node.attempts,
      startedAt: node.started_at ?? undefined,
      finishedAt: node.finished_at ?? undefined,
      error: node.error ?? undefined,
    };
    if (node.status === 'completed') {
      const output = kept.get(node.node_id);
      // A completed node without its output runs again rather than feeding '' onwards.
      if (output === undefined) state.status = 'pending';
      else state.output = output;
    }
    resumeFrom.set(node.node_id, state);
  }
  await ctx.outputs.prepare(row.run_id);
  const reset = async (tx: GraphQueryable) => {
    await tx.execute(
      "UPDATE graph_run_nodes SET status = 'pending' WHERE run_id = ? AND status NOT IN ('completed', 'failed', 'skipped')",
      [row.run_id],
    );
    for (const [nodeId, state] of resumeFrom) {
      if (state.status === 'pending') {
        await tx.execute("UPDATE graph_run_nodes SET status = 'pending' WHERE run_id = ? AND node_id = ?", [
          row.run_id,
          nodeId,
        ]);
      }
    }
    await tx.execute(
      "UPDATE graph_runs SET status = 'running', resumed_count = resumed_count + 1 WHERE run_id = ?",
      [row.run_id],
    );
  };
  if (ctx.cluster) {
    if (!(await fencedWrite(ctx, ctx.cluster, row.run_id, reset))) {
      ctx.cluster.fences.delete(row.run_id);
      return;
    }
  } else {
    await ctx.db.transaction(reset);
  }
  startRun(ctx, {
    runId: row.run_id,
    graphId: row.graph_id,
    startedAt: Number(row.started_at),
    graph,
    inputs: JSON.parse(row.inputs) as Record<string, unknown>,
    concurrency: row.concurrency,
    defaultAgentId: row.default_agent_id ?? undefined,
    tenant: row.tenant ?? undefined,
    resumeFrom,
    cancelled: Number(row.cancel_requested) === 1,
  });
  const completed = [...resumeFrom.values()].filter((state) => state.status === 'completed').length;
  ctx.logger.info(
    {
      runId: row.run_id,
      graphId: row.graph_id,
      completedNodes: completed,
      nodeCount: graph.nodes.length,
    },
    'graph run resumed',
  );
}

/** Checks and starts a run of a defined graph; emits `pipeline:authored` either way. */
export async function executeRun(
  ctx: GraphContext,
  input: unknown,
  executeOptions: ExecuteOptions,
): ReturnType<GraphService['execute']> {
  const writer = ready(ctx);
  const author = executeOptions.author ?? { origin: 'rpc' };
  const parsed = executeParamsSchema.safeParse(input);
  if (!parsed.success) {
    emitAuthored(ctx, { action: 'execute', valid: false, nodeCount: 0, invalidReason: 'parse' }, author);
    throw argumentError(parsed.error.issues);
  }
  const { graphId, inputs = {}, concurrency = ctx.settings.defaultConcurrency } = parsed.data;
  if (concurrency > ctx.settings.maxConcurrency) {
    emitAuthored(
      ctx,
      { action: 'execute', valid: false, nodeCount: 0, invalidReason: 'parse', graphId },
      author,
    );
    throw new GraphError(
      'INVALID_ARGUMENT',
      `Invalid params: concurrency: at most ${ctx.settings.maxConcurrency}`,
      {
        data: {
          issues: [
            { path: ['concurrency'], code: 'too_big', message: `at most ${ctx.settings.maxConcurrency}` },
          ],
        },
      },
    );
  }
  const row = await ctx.db.get<{ definition: string; name: string | null; tenant: string | null }>(
    'SELECT definition, name, tenant FROM graph_definitions WHERE graph_id = ?',
    [graphId],
  );
  // A tenant's caller finds only its tenant's graphs; the run belongs to the caller's tenant.
  if (!row || (author.tenant !== undefined && (row.tenant ?? undefined) !== author.tenant)) {
    emitAuthored(
      ctx,
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
      ctx,
      {
        action: 'execute',
        valid: true,
        nodeCount: graph.nodes.length,
        excluded: 'policy_rejected',
        graphId,
      },
      author,
    );
    throw new GraphError('POLICY_DENIED', 'the agent-to-agent policy does not allow running these agents', {
      data: { agentIds },
    });
  }
  if (!ctx.executor) {
    emitAuthored(ctx, { action: 'execute', valid: true, nodeCount: graph.nodes.length, graphId }, author);
    throw new GraphError('EXECUTOR_UNAVAILABLE', 'Agent runtime is not available: graph nodes cannot run');
  }
  const runId = ctx.randomId();
  const startedAt = ctx.now();
  await ctx.outputs.prepare(runId);
  const { cluster } = ctx;
  // In a cluster the run is born owned by this instance at fence 1, its lease on the database clock.
  const owned = cluster
    ? { columns: ', owner, fence, lease_until', values: `, ?, 1, ${PG_NOW_MS} + ?` }
    : { columns: '', values: '' };
  await ctx.db.transaction(async (tx) => {
    await tx.execute(
      `INSERT INTO graph_runs (run_id, graph_id, status, definition, node_count, inputs, concurrency, default_agent_id, started_at, tenant${owned.columns})
       VALUES (?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?${owned.values})`,
      [
        runId,
        graphId,
        row.definition,
        graph.nodes.length,
        JSON.stringify(inputs),
        concurrency,
        executeOptions.defaultAgentId ?? null,
        startedAt,
        author.tenant ?? null,
        ...(cluster ? [cluster.coordinator.instanceId, cluster.leaseMs] : []),
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
  const running = "UPDATE graph_runs SET status = 'running' WHERE run_id = ?";
  if (cluster) {
    cluster.fences.set(runId, 1);
    await fencedWrite(ctx, cluster, runId, async (tx) => void (await tx.execute(running, [runId])));
  } else {
    await writer.write(running, [runId]);
  }
  startRun(ctx, {
    runId,
    graphId,
    startedAt,
    graph,
    inputs,
    concurrency,
    defaultAgentId: executeOptions.defaultAgentId,
    tenant: author.tenant,
    resumeFrom: undefined,
    cancelled: false,
  });
  emitAuthored(
    ctx,
    { action: 'execute', valid: true, nodeCount: graph.nodes.length, graphId, runId },
    author,
  );
  ctx.logger.info({ runId, graphId, nodeCount: graph.nodes.length, concurrency }, 'graph run started');
  return { runId };
}

/** Cancels a run: the live execution, or (no process running it) its records directly. */
export async function cancelRun(ctx: GraphContext, runId: string): ReturnType<GraphService['cancel']> {
  ready(ctx);
  const run = ctx.active.get(runId);
  if (run) {
    const accepted = run.execution.cancel();
    if (accepted)
      await ctx.db.execute('UPDATE graph_runs SET cancel_requested = 1 WHERE run_id = ?', [runId]);
    const status = run.execution.status;
    return {
      runId,
      status: status === 'running' || status === 'interrupted' ? 'running' : status,
      cancelled: accepted,
    };
  }
  if (ctx.cluster) return cancelElsewhere(ctx, ctx.cluster, runId);
  const row = await loadRun(ctx, runId);
  if (row.status !== 'pending' && row.status !== 'running') {
    return { runId, status: row.status as RunStatus, cancelled: false };
  }
  // An unfinished run no process is executing (no executor at start): finish it here.
  const at = ctx.now();
  await ctx.db.transaction(async (tx) => {
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
