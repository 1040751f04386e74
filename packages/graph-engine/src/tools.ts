import type { AgentTool, ToolContext } from '@agentd/contracts';
import { z } from 'zod';
import { graphDefinitionSchema, type GraphLimits } from './definition.js';
import { GraphError } from './errors.js';
import type { RunStatus } from './execute.js';
import type { GraphAuthor } from './events.js';
import { type RawInput, unwrapRawInput, withRawFallback } from './raw-input.js';
import { entityIdPattern } from './graph-types.js';
import type { GraphService } from './service.js';

/** What the agent runtime hands a tool call (`ToolContext` from `@agentd/contracts`). */
export type GraphToolContext = ToolContext;

/** An agent tool (`AgentTool` from `@agentd/contracts`). */
export type GraphAgentTool<P = unknown> = AgentTool<P>;

/**
 * The agent-to-agent policy: may the calling agent run a turn as the target agent? A node
 * that names no agent runs as the caller, which is always allowed.
 */
export type AgentToAgentPolicy = (request: {
  callerAgentId: string;
  targetAgentId: string;
}) => boolean | Promise<boolean>;

/** The default policy: an agent may only run its own turns. */
export const sameAgentOnly: AgentToAgentPolicy = ({ callerAgentId, targetAgentId }) =>
  callerAgentId === targetAgentId;

/** Options of {@link createGraphTools}. */
export interface GraphToolsOptions {
  /** The service the tools define and execute on. */
  service: GraphService;
  /** Decides whether the caller may run nodes as other agents. @default sameAgentOnly */
  policy?: AgentToAgentPolicy | undefined;
  /** Limits shown to the model in the define schema (the service enforces its own). */
  limits?: GraphLimits | undefined;
  /** Longest a `graph_execute` call may wait for its run to finish, in ms. @default 600000 */
  maxWaitMs?: number | undefined;
}

/**
 * The graph tools for agents: `graph_define` validates and stores a pipeline (an invalid one
 * comes back as issues the agent can fix) and `graph_execute` runs it, optionally waiting for
 * the outputs. Nodes without an `agentId` run as the calling agent; other agents need the
 * agent-to-agent policy's consent. Both report `pipeline:authored` with `origin: 'tool'`.
 */
export function createGraphTools(options: GraphToolsOptions): GraphAgentTool[] {
  const { service } = options;
  const policy = options.policy ?? sameAgentOnly;
  const maxWaitMs = options.maxWaitMs ?? 600_000;

  const executeSchema = z
    .object({
      graphId: z.string().regex(entityIdPattern),
      inputs: z.record(z.string(), z.unknown()).optional(),
      concurrency: z.number().int().min(1).optional(),
      waitMs: z.number().int().min(0).max(maxWaitMs).optional(),
    })
    .strict();

  const defineTool: GraphAgentTool<z.output<ReturnType<typeof graphDefinitionSchema>> | RawInput> = {
    name: 'graph_define',
    // Authors as the turn's tenant (`authorOf`): a tenant's turn defines and runs its own graphs.
    tenantScoped: true,
    description:
      'Define a pipeline: a directed acyclic graph of agent steps. Each node has an id, a prompt ' +
      '(which may use {{inputs.<name>}} and {{nodes.<id>.output}} of nodes it depends on) and ' +
      'optional dependsOn, agentId, timeoutMs and retries. Returns a graphId for graph_execute, or ' +
      'the validation issues to fix.',
    params: withRawFallback(graphDefinitionSchema(options.limits)),
    handler: async (params, context) => {
      try {
        return await service.define(unwrapRawInput(params), authorOf(context));
      } catch (error) {
        if (error instanceof GraphError && error.code === 'INVALID_GRAPH') {
          return { valid: false, error: error.message, issues: error.issues };
        }
        throw error;
      }
    },
  };

  const executeTool: GraphAgentTool<z.output<typeof executeSchema> | RawInput> = {
    name: 'graph_execute',
    tenantScoped: true,
    description:
      'Run a pipeline defined with graph_define. inputs fill {{inputs.<name>}}; waitMs (optional) ' +
      'waits up to that long and returns the status and node outputs, otherwise the runId returns at once.',
    params: withRawFallback(executeSchema),
    handler: async (params, context) => {
      const raw = unwrapRawInput(params) as Record<string, unknown> | undefined;
      const { waitMs, ...request } = (raw ?? {}) as { waitMs?: unknown } & Record<string, unknown>;
      const author = authorOf(context);
      let runId: string;
      try {
        ({ runId } = await service.execute(request, {
          author,
          defaultAgentId: context.agentId,
          authorize: async (agentIds) => {
            for (const targetAgentId of agentIds) {
              if (!(await policy({ callerAgentId: context.agentId, targetAgentId }))) return false;
            }
            return true;
          },
        }));
      } catch (error) {
        if (
          error instanceof GraphError &&
          (error.code === 'POLICY_DENIED' || error.code === 'INVALID_ARGUMENT')
        ) {
          return {
            error: error.code === 'POLICY_DENIED' ? 'policy_denied' : 'invalid_params',
            message: error.message,
          };
        }
        throw error;
      }
      const wait = typeof waitMs === 'number' ? Math.min(Math.max(0, waitMs), maxWaitMs) : 0;
      if (wait === 0) return { runId };
      const status = await waitFor(service.waitForRun(runId), wait, context.signal);
      if (status === undefined) return { runId, status: 'running' satisfies RunStatus };
      const { outputs } = await service.outputs(runId);
      return { runId, status, outputs };
    },
  };

  return [defineTool, executeTool];
}

/** The tool's caller as an author: its agent and, in a tenant's turn, the tenant. */
function authorOf(context: ToolContext): GraphAuthor {
  return {
    origin: 'tool',
    agentId: context.agentId,
    ...(context.memoryTenant === undefined ? {} : { tenant: context.memoryTenant }),
  };
}

function waitFor<T>(promise: Promise<T>, ms: number, signal: AbortSignal): Promise<T | undefined> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish(undefined), ms);
    const onAbort = () => finish(undefined);
    const finish = (value: T | undefined) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve(value);
    };
    if (signal.aborted) finish(undefined);
    else signal.addEventListener('abort', onAbort, { once: true });
    promise.then(finish, (error: unknown) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      reject(error);
    });
  });
}
