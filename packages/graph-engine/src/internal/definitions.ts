import { compileGraph, type CompiledGraph } from '../definition.js';
import { GraphError } from '../errors.js';
import type { GraphService } from '../service.js';
import type { GraphAuthor } from '../events.js';
import { entityIdPattern, savedNamePattern } from '../graph-types.js';
import { emitAuthored, type GraphContext, ready } from './graph-context.js';

// Graph definitions and saved graphs.

/** Compiles and stores a definition; emits `pipeline:authored` either way. */
export async function defineGraph(
  ctx: GraphContext,
  input: unknown,
  author: GraphAuthor,
): ReturnType<GraphService['define']> {
  ready(ctx);
  const nodes = (input as { nodes?: unknown } | null | undefined)?.nodes;
  const empty = nodes === undefined || (Array.isArray(nodes) && nodes.length === 0);
  let graph: CompiledGraph;
  try {
    graph = compileGraph(input, ctx.settings.limits);
  } catch (error) {
    if (error instanceof GraphError) {
      emitAuthored(
        ctx,
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
  const graphId = ctx.randomId();
  await ctx.db.execute(
    'INSERT INTO graph_definitions (graph_id, name, definition, node_count, created_at, tenant) VALUES (?, ?, ?, ?, ?, ?)',
    [
      graphId,
      graph.name ?? null,
      JSON.stringify(graph.definition),
      graph.nodes.length,
      ctx.now(),
      author.tenant ?? null,
    ],
  );
  emitAuthored(ctx, { action: 'define', valid: true, nodeCount: graph.nodes.length, graphId }, author);
  return { graphId, nodeCount: graph.nodes.length };
}

/**
 * Saves a defined graph under a name (replacing one of the same name). With `tenant`, only that
 * tenant's graph is found and the saved graph is the tenant's.
 */
export async function saveGraph(
  ctx: GraphContext,
  graphId: string,
  name: string,
  tenant?: string,
): ReturnType<GraphService['save']> {
  ready(ctx);
  checkName(name);
  const row = entityIdPattern.test(graphId)
    ? await ctx.db.get<{ definition: string; node_count: number; tenant: string | null }>(
        'SELECT definition, node_count, tenant FROM graph_definitions WHERE graph_id = ?',
        [graphId],
      )
    : undefined;
  if (!row || (tenant !== undefined && (row.tenant ?? undefined) !== tenant))
    throw new GraphError('GRAPH_NOT_FOUND', `Graph not found: ${graphId}`, { data: { graphId } });
  const createdAt = ctx.now();
  await ctx.db.execute(
    `INSERT INTO graph_saved (name, source_graph_id, definition, node_count, created_at, tenant) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (name) DO UPDATE SET source_graph_id = excluded.source_graph_id, definition = excluded.definition,
       node_count = excluded.node_count, created_at = excluded.created_at, tenant = excluded.tenant`,
    [name, graphId, row.definition, row.node_count, createdAt, tenant ?? null],
  );
  return { name, graphId, createdAt, nodeCount: row.node_count };
}

/** Defines a new graph from a saved one; the new graph belongs to the saved graph's tenant. */
export async function loadGraph(ctx: GraphContext, name: string): ReturnType<GraphService['load']> {
  ready(ctx);
  const row = await ctx.db.get<{ definition: string; node_count: number; tenant: string | null }>(
    'SELECT definition, node_count, tenant FROM graph_saved WHERE name = ?',
    [name],
  );
  if (!row) throw new GraphError('SAVED_GRAPH_NOT_FOUND', `Graph not found: ${name}`, { data: { name } });
  const graphId = ctx.randomId();
  await ctx.db.execute(
    'INSERT INTO graph_definitions (graph_id, name, definition, node_count, created_at, tenant) VALUES (?, ?, ?, ?, ?, ?)',
    [graphId, name, row.definition, row.node_count, ctx.now(), row.tenant],
  );
  return { graphId, nodeCount: row.node_count, name };
}

/** Saved graphs by name; with `tenant`, only that tenant's. */
export async function listGraphs(ctx: GraphContext, tenant?: string): ReturnType<GraphService['list']> {
  ready(ctx);
  const rows = await ctx.db.query<{ name: string; created_at: number; node_count: number }>(
    tenant === undefined
      ? 'SELECT name, created_at, node_count FROM graph_saved ORDER BY name'
      : 'SELECT name, created_at, node_count FROM graph_saved WHERE tenant = ? ORDER BY name',
    tenant === undefined ? [] : [tenant],
  );
  return {
    graphs: rows.map((row) => ({ name: row.name, createdAt: row.created_at, nodeCount: row.node_count })),
  };
}

/**
 * The owner of a graph, saved graph or run: `{tenant}` (no tenant for the operator's), or
 * undefined when there is none of that id or name.
 */
export async function ownerOf(
  ctx: GraphContext,
  ref: { graphId: string } | { name: string } | { runId: string },
): Promise<{ tenant?: string } | undefined> {
  ready(ctx);
  const [sql, key] =
    'graphId' in ref
      ? ['SELECT tenant FROM graph_definitions WHERE graph_id = ?', ref.graphId]
      : 'name' in ref
        ? ['SELECT tenant FROM graph_saved WHERE name = ?', ref.name]
        : ['SELECT tenant FROM graph_runs WHERE run_id = ?', ref.runId];
  const row = await ctx.db.get<{ tenant: string | null }>(sql, [key]);
  if (!row) return undefined;
  return row.tenant === null ? {} : { tenant: row.tenant };
}

/** Deletes a saved graph; throws `SAVED_GRAPH_NOT_FOUND`. */
export async function deleteGraph(ctx: GraphContext, name: string): ReturnType<GraphService['delete']> {
  ready(ctx);
  const result = (await ctx.db.execute('DELETE FROM graph_saved WHERE name = ?', [name])) as {
    rowsAffected?: number;
  };
  if (!result.rowsAffected)
    throw new GraphError('SAVED_GRAPH_NOT_FOUND', `Graph not found: ${name}`, { data: { name } });
  return { deleted: true, name };
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
