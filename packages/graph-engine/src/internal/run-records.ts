import type { GraphSqlValue } from '../database.js';
import type { GraphDefinition } from '../definition.js';
import { GraphError } from '../errors.js';
import type { GraphService } from '../service.js';
import type { NodeStatus, RunStatus } from '../execute.js';
import {
  OUTPUT_VALUE_LIMIT,
  type RunDetailNode,
  type RunStatusNode,
  type RunSummary,
  STATUS_OUTPUT_LIMIT,
} from '../graph-types.js';
import { type ActiveRun, type GraphContext, loadNodes, loadRun, ready } from './graph-context.js';
import type { RunRow } from './schema.js';

// Run records: status, outputs (memory, then disk), listings, detail, deletion.

/** A run's status with each node's, live when this process runs it. */
export async function runStatus(ctx: GraphContext, runId: string): ReturnType<GraphService['status']> {
  ready(ctx);
  const run = ctx.active.get(runId);
  if (run) {
    return {
      runId,
      graphId: run.graphId,
      status: 'running',
      startedAt: run.startedAt,
      nodes: run.execution.nodes().map((node) => statusNode(node.id, node.status, node.output, node.error)),
    };
  }
  const row = await loadRun(ctx, runId);
  const nodes = await loadNodes(ctx, runId);
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
}

/** Node outputs, from memory while the run is live or recent, else from the output files. */
export async function runOutputs(
  ctx: GraphContext,
  runId: string,
  nodeIds: string[] | undefined,
): ReturnType<GraphService['outputs']> {
  ready(ctx);
  const run = ctx.active.get(runId);
  const cached = ctx.memory.get(runId);
  let ids: string[];
  if (run) {
    ids = nodeIds ?? run.graph.nodes.map((node) => node.id);
    checkNodes(ids, (id) => run.graph.indexOf.has(id));
    const outputs: Record<string, string | null> = {};
    for (const id of ids) outputs[id] = truncate(liveNode(run, id)?.output, OUTPUT_VALUE_LIMIT);
    return { outputs, source: 'memory' };
  }
  await loadRun(ctx, runId);
  const rows = await loadNodes(ctx, runId);
  const byId = new Map(rows.map((row) => [row.node_id, row]));
  ids = nodeIds ?? rows.map((row) => row.node_id);
  checkNodes(ids, (id) => byId.has(id));
  const outputs: Record<string, string | null> = {};
  if (cached) {
    for (const id of ids) outputs[id] = truncate(cached.get(id), OUTPUT_VALUE_LIMIT);
    ctx.memory.delete(runId);
    ctx.memory.set(runId, cached);
    return { outputs, source: 'memory' };
  }
  for (const id of ids) {
    if (byId.get(id)?.status !== 'completed') {
      outputs[id] = null;
      continue;
    }
    let text: string | undefined;
    try {
      text = await ctx.outputs.read(runId, id);
    } catch (error) {
      ctx.logger.warn(
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
      ctx.logger.warn(
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
}

/** Runs newest first, optionally of one graph. */
export async function listRuns(
  ctx: GraphContext,
  filter: { graphId?: string | undefined; limit?: number | undefined; tenant?: string | undefined },
): ReturnType<GraphService['runs']> {
  ready(ctx);
  const limit = Math.min(Math.max(filter.limit ?? 50, 1), 500);
  const where: string[] = [];
  const args: GraphSqlValue[] = [];
  if (filter.graphId !== undefined) {
    where.push('graph_id = ?');
    args.push(filter.graphId);
  }
  if (filter.tenant !== undefined) {
    where.push('tenant = ?');
    args.push(filter.tenant);
  }
  const rows = await ctx.db.query<RunRow>(
    `SELECT * FROM graph_runs ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
     ORDER BY started_at DESC, rowid DESC LIMIT ?`,
    [...args, limit],
  );
  return { runs: rows.map((row) => summary(row, ctx.active.has(row.run_id))) };
}

/** A run with its definition's shape and each node's progress. */
export async function runDetail(ctx: GraphContext, runId: string): ReturnType<GraphService['runDetail']> {
  ready(ctx);
  const row = await loadRun(ctx, runId);
  const rows = await loadNodes(ctx, runId);
  const run = ctx.active.get(runId);
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
}

/** Deletes a finished run's records and files; throws `RUN_ACTIVE` while it runs. */
export async function deleteRun(ctx: GraphContext, runId: string): ReturnType<GraphService['deleteRun']> {
  ready(ctx);
  const row = await loadRun(ctx, runId);
  if (ctx.active.has(runId) || row.status === 'pending' || row.status === 'running') {
    throw new GraphError(
      'RUN_ACTIVE',
      `Run is still ${row.status === 'pending' ? 'pending' : 'running'}: ${runId}`,
      {
        data: { runId, status: row.status },
      },
    );
  }
  await ctx.db.transaction(async (tx) => {
    await tx.execute('DELETE FROM graph_run_nodes WHERE run_id = ?', [runId]);
    await tx.execute('DELETE FROM graph_runs WHERE run_id = ?', [runId]);
  });
  ctx.memory.delete(runId);
  try {
    await ctx.outputs.remove(runId);
  } catch (error) {
    ctx.logger.warn(
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
}

/** Resolves with the run's final status (at once for a finished run). */
export async function waitForRun(ctx: GraphContext, runId: string): Promise<RunStatus> {
  const run = ctx.active.get(runId);
  if (run) return run.finished;
  const row = await loadRun(ctx, runId);
  return row.status as RunStatus;
}

function liveNode(run: ActiveRun, nodeId: string) {
  return run.execution.node(nodeId);
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
