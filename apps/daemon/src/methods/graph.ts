import {
  entityIdPattern,
  GraphError,
  type GraphLimits,
  type GraphService,
  graphDefinitionSchema,
  nodeIdPattern,
  savedNamePattern,
  unwrapRawInput,
  withRawFallback,
} from '@agentd/graph-engine';
import { type MethodContext, type ParamIssue, RpcError } from '@agentd/rpc-core';
import { z } from 'zod';
import { methodsOf } from './define.js';
import { type TenantGuard, tenantGuard, tenantNames } from './tenancy.js';

/** `graph.deleteRun` of a run that is still pending or running (docs/decisions.md). */
export const RUN_STILL_ACTIVE = -32009;

const runId = z.string().regex(entityIdPattern, 'run id: 1-128 letters, digits, _ or -');
const graphId = z.string().regex(entityIdPattern, 'graph id: 1-128 letters, digits, _ or -');
const savedName = z.string().regex(savedNamePattern, 'name: 1-128 characters without control characters');
/** The params of the methods that take one run. */
const runParams = z.object({ runId }).strict();
/** The params of the methods that take one saved graph. */
const savedParams = z.object({ name: savedName }).strict();

/** Turns graph-engine failures into the wire errors of decisions.md. */
function graphRpcError(error: unknown): unknown {
  if (!(error instanceof GraphError)) return error;
  switch (error.code) {
    case 'INVALID_GRAPH':
    case 'INVALID_ARGUMENT': {
      const issues: ParamIssue[] = error.issues;
      const summary = issues
        .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : 'params'}: ${issue.message}`)
        .join('; ');
      return RpcError.invalidParams(`Invalid params: ${summary}`, issues);
    }
    case 'GRAPH_NOT_FOUND':
      return RpcError.notFound('graph', String(error.data?.graphId));
    case 'SAVED_GRAPH_NOT_FOUND':
      return RpcError.notFound('graph', String(error.data?.name));
    case 'RUN_NOT_FOUND':
      return RpcError.notFound('run', String(error.data?.runId));
    case 'NODE_NOT_FOUND':
      return RpcError.notFound('node', String(error.data?.nodeId));
    case 'RUN_ACTIVE':
      return new RpcError(RUN_STILL_ACTIVE, error.message, { data: error.data });
    default:
      return error;
  }
}

/**
 * graph.*: pipelines as directed acyclic graphs of agent steps. `define` and `execute` take
 * their body through to the service even when it does not parse, so every authoring is
 * reported in `pipeline:authored`; the service answers -32602 naming the fields.
 */
export function graphMethods(deps: {
  graph: GraphService;
  limits?: GraphLimits;
  maxConcurrency?: number;
  tenants?: TenantGuard;
}) {
  const { graph } = deps;
  const tenants = deps.tenants ?? tenantGuard();
  const { rpcMethod } = methodsOf('graph', graphRpcError);
  /** The author of a call: a tenant-bound caller's graphs and runs are its tenant's. */
  const author = (context: MethodContext) => {
    const tenant = context.identity.tenant;
    return tenant === undefined ? { origin: 'rpc' as const } : { origin: 'rpc' as const, tenant };
  };
  /** A run or saved graph of another owner is not found for a tenant-bound caller, as a missing one. */
  const mine = async (context: MethodContext, ref: { runId: string } | { name: string }): Promise<void> => {
    if (context.identity.tenant === undefined) return;
    const owner = await graph.ownerOf(ref);
    if (owner === undefined) return;
    if ('runId' in ref) tenants.owned(context, owner.tenant, 'run', ref.runId);
    else tenants.owned(context, owner.tenant, 'graph', tenantNames(context).show(ref.name));
  };
  /** Runs a call on one run after the owner check. */
  const onRun =
    <T>(call: (runId: string) => Promise<T>) =>
    async (params: { runId: string }, context: MethodContext): Promise<T> => {
      await mine(context, { runId: params.runId });
      return call(params.runId);
    };
  /**
   * Runs a call on one saved graph by the name the caller knows: qualified by its tenant, after
   * the owner check; the answer names the graph as the caller knows it again.
   */
  const onSaved =
    <P extends { name: string }, T extends { name: string }>(
      call: (name: string, params: P, context: MethodContext) => Promise<T>,
    ) =>
    async (params: P, context: MethodContext): Promise<T> => {
      const names = tenantNames(context);
      const name = names.qualify(params.name);
      await mine(context, { name });
      const result = await call(name, params, context);
      return { ...result, name: names.show(result.name) };
    };
  const executeParams = z
    .object({
      graphId,
      inputs: z.record(z.string(), z.unknown()).optional(),
      concurrency: z
        .number()
        .int()
        .min(1)
        .max(deps.maxConcurrency ?? 1024)
        .optional(),
    })
    .strict();
  return [
    rpcMethod('define', {
      description:
        'Define a pipeline {nodes:[{id, prompt, agentId?, dependsOn?, timeoutMs?, retries?}], name?}; ' +
        'prompts may use {{inputs.x}} and {{nodes.<id>.output}}. Returns {graphId, nodeCount}.',
      params: withRawFallback(graphDefinitionSchema(deps.limits)),
      handler: (params, context) => graph.define(unwrapRawInput(params), author(context)),
    }),
    rpcMethod('execute', {
      description: 'Start a run of a defined graph with optional inputs and concurrency. Returns {runId}.',
      params: withRawFallback(executeParams),
      handler: (params, context) => graph.execute(unwrapRawInput(params), { author: author(context) }),
    }),
    rpcMethod('status', {
      description: 'Run status with per-node status, error and output (first 500 characters).',
      params: runParams,
      handler: onRun((id) => graph.status(id)),
    }),
    rpcMethod('outputs', {
      description:
        'Node outputs {outputs: {nodeId: string|null}, source: memory|disk}; null = not complete; ' +
        'each value cut at 12,000 characters.',
      params: z
        .object({
          runId,
          nodeIds: z.array(z.string().regex(nodeIdPattern, 'node id')).max(100_000).optional(),
        })
        .strict(),
      handler: async (params, context) => {
        await mine(context, { runId: params.runId });
        return graph.outputs(params.runId, params.nodeIds);
      },
    }),
    rpcMethod('cancel', {
      description: 'Cancel a running graph: in-flight nodes finish, no new nodes are dispatched.',
      params: runParams,
      handler: onRun((id) => graph.cancel(id)),
    }),
    rpcMethod('save', {
      description: 'Save a defined graph (by graphId) under a human-readable name.',
      params: z.object({ graphId, name: savedName }).strict(),
      handler: onSaved((name, params: { graphId: string; name: string }, context) =>
        graph.save(params.graphId, name, context.identity.tenant),
      ),
    }),
    rpcMethod('load', {
      description: 'Load a saved graph by name; returns a fresh graphId ready to execute.',
      params: savedParams,
      handler: onSaved((name) => graph.load(name)),
    }),
    rpcMethod('list', {
      description: 'Saved named graphs: name, creation timestamp, node count.',
      handler: async (_params, context) => {
        const names = tenantNames(context);
        const { graphs } = await graph.list(context.identity.tenant);
        return { graphs: graphs.map((saved) => ({ ...saved, name: names.show(saved.name) })) };
      },
    }),
    rpcMethod('delete', {
      description: 'Delete a saved named graph only; runs and their files are untouched.',
      params: savedParams,
      handler: onSaved((name) => graph.delete(name)),
    }),
    rpcMethod('deleteRun', {
      description: "Delete a finished run's records and output files; a pending or running run is refused.",
      params: runParams,
      handler: onRun((id) => graph.deleteRun(id)),
    }),
    rpcMethod('runDetail', {
      description:
        'Everything recorded about one run: inputs, concurrency, per-node attempts, times and errors.',
      params: runParams,
      handler: onRun((id) => graph.runDetail(id)),
    }),
    rpcMethod('runs', {
      description: 'Runs, newest first, optionally of one graph (limit default 50, at most 500).',
      params: z
        .object({ graphId: graphId.optional(), limit: z.number().int().min(1).max(500).optional() })
        .strict(),
      handler: (params, context) => graph.runs({ ...params, tenant: context.identity.tenant }),
    }),
  ];
}
