import { entityIdSchema, sessionKeySchema } from '@agentd/agent-runtime';
import { type AutonomyService, isAutonomyError, type RunView } from '@agentd/autonomy';
import { type MethodContext, RpcError } from '@agentd/rpc-core';
import { z } from 'zod';
import { methodsOf } from './define.js';
import { type TenantGuard, tenantGuard } from './tenancy.js';

const runIdSchema = z.string().min(1).max(128);
const targetSchema = z.string().min(1).max(512);
/** The params of the admin methods that act on one run tree. */
const treeParams = z.object({ rootRunId: runIdSchema }).strict();
const statusSchema = z.enum(['running', 'completed', 'failed', 'killed', 'timeout', 'orphaned']);

/** Maps autonomy errors to the wire errors of decisions.md (limits are `-32000` like rate limits). */
function toWire(error: unknown): unknown {
  if (!isAutonomyError(error)) return error;
  const data = error.data ?? {};
  switch (error.code) {
    case 'RUN_NOT_FOUND':
      return RpcError.notFound('Run', String(data.target ?? ''));
    case 'INVALID_OPTIONS':
      if (typeof data.agentId === 'string') return RpcError.notFound('Agent', data.agentId);
      return RpcError.invalidParams(
        `Invalid params: ${error.message}`,
        (data.issues ?? []).map((issue) => ({ ...issue, code: 'custom' })),
      );
    case 'LIMIT_EXCEEDED':
      return new RpcError(-32000, error.message, { data: { limit: data.limit } });
    case 'RATE_LIMITED':
      return new RpcError(-32000, error.message, { data: { retryInMs: data.retryInMs } });
    case 'NOT_RUNNING': {
      // A spawn under an ended run names parentKey; a steer of an ended run names target.
      const field = data.field === 'parentKey' ? 'parentKey' : 'target';
      const message = error.message.replace(/^parentKey: /, '');
      return RpcError.invalidParams(`Invalid params: ${field}: ${message}`, [
        { path: [field], code: 'custom', message },
      ]);
    }
    default:
      return error;
  }
}

/**
 * The run a caller names, when its tenant may see it; another tenant's run answers `-32004`
 * as if it did not exist (decisions.md).
 */
async function visibleRun(
  autonomy: AutonomyService,
  tenants: TenantGuard,
  context: MethodContext,
  target: string,
): Promise<RunView> {
  const run = await autonomy.status(target);
  if (!tenants.shows(context, run.sessionKey)) throw RpcError.notFound('Run', target);
  return run;
}

/**
 * Sub-agent runs and run control: session.spawn, session.run_status, subagent.list, kill and
 * steer (rpc); lease.revoke, run.kill, autonomy.evict (admin); capabilities.introspect (rpc,
 * the caller's own runs only).
 */
export function autonomyMethods(deps: { autonomy: AutonomyService; tenants?: TenantGuard }) {
  const { autonomy } = deps;
  const tenants = deps.tenants ?? tenantGuard();
  const session = methodsOf('session', toWire);
  const subagent = methodsOf('subagent', toWire);
  /** Runs a call on the run tree `rootRunId` names, once the caller's tenant may see it. */
  const onTree =
    <T>(call: (rootRunId: string) => Promise<T>) =>
    async ({ rootRunId }: { rootRunId: string }, context: MethodContext): Promise<T> => {
      await visibleRun(autonomy, tenants, context, rootRunId);
      return call(rootRunId);
    };
  return [
    session.rpcMethod('spawn', {
      description: 'Start a sub-agent run on a task in its own session; answers at once with its runId.',
      params: z
        .object({
          parentKey: sessionKeySchema,
          task: z.string().min(1).max(100_000),
          agentId: entityIdSchema.optional(),
        })
        .strict(),
      handler: ({ parentKey, task, agentId }, context) =>
        autonomy.spawn({
          parentSessionKey: tenants.session(context, parentKey),
          task,
          agentId,
          clientId: context.clientId,
          ...(context.identity.tenant !== undefined ? { memoryTenant: context.identity.tenant } : {}),
        }),
    }),
    session.rpcMethod('run_status', {
      description: 'A sub-agent run: status, timing, and its response and token use once complete.',
      params: z.object({ run_id: runIdSchema }).strict(),
      handler: ({ run_id }, context) => visibleRun(autonomy, tenants, context, run_id),
    }),
    subagent.rpcMethod('list', {
      description: 'Sub-agent runs, newest first, optionally by status.',
      params: z
        .object({ status: statusSchema.optional(), limit: z.number().int().min(1).max(500).optional() })
        .strict(),
      handler: async ({ status, limit }, context) => {
        const runs = await autonomy.list({ status, limit, keyPrefix: tenants.prefix(context) });
        return { runs: runs.filter((run) => tenants.shows(context, run.sessionKey)) };
      },
    }),
    subagent.rpcMethod('kill', {
      description: 'Kill a run (by run id or session key) and every run below it, with their processes.',
      params: z.object({ target: targetSchema, reason: z.string().max(500).optional() }).strict(),
      handler: async ({ target, reason }, context) => {
        const run = await visibleRun(autonomy, tenants, context, target);
        return autonomy.kill(run.runId, reason);
      },
    }),
    subagent.rpcMethod('steer', {
      description:
        'Steer a running run: respawn it with a new task, or inject a message (security.agentToAgent.steerInject).',
      params: z.object({ target: targetSchema, message: z.string().min(1).max(100_000) }).strict(),
      handler: async ({ target, message }, context) => {
        const run = await visibleRun(autonomy, tenants, context, target);
        return autonomy.steer(run.runId, message);
      },
    }),
    methodsOf('lease', toWire).adminMethod('revoke', {
      description:
        'Revoke a lease (and those below it) or every lease of a run tree; later validate and renew are refused.',
      params: z
        .object({ leaseId: runIdSchema.optional(), rootRunId: runIdSchema.optional() })
        .strict()
        .refine((value) => (value.leaseId === undefined) !== (value.rootRunId === undefined), {
          message: 'give exactly one of leaseId and rootRunId',
          path: ['leaseId'],
        }),
      handler: async ({ leaseId, rootRunId }, context) => {
        if (rootRunId !== undefined) {
          await visibleRun(autonomy, tenants, context, rootRunId);
          return autonomy.revoke({ rootRunId });
        }
        const lease = await autonomy.leases.get(leaseId ?? '');
        if (!lease) throw RpcError.notFound('Lease', leaseId ?? '');
        await visibleRun(autonomy, tenants, context, lease.runId);
        return autonomy.revoke({ leaseId: lease.leaseId });
      },
    }),
    methodsOf('run', toWire).adminMethod('kill', {
      description: 'Abort a whole run tree and revoke its leases.',
      params: treeParams,
      handler: onTree((rootRunId) => autonomy.killTree(rootRunId)),
    }),
    methodsOf('autonomy', toWire).adminMethod('evict', {
      description:
        'Mark a run tree evicted: its next tool-gate decisions use the default profile. The run goes on.',
      params: treeParams,
      handler: onTree((rootRunId) => autonomy.evict(rootRunId)),
    }),
    methodsOf('capabilities', toWire).rpcMethod('introspect', {
      description:
        "The caller's own running sub-agent runs: capabilities, remaining budget, lease, and the quota; the MCP servers' state, tools and last error.",
      handler: (_params, context) =>
        autonomy.introspect({ clientId: context.clientId, keyPrefix: tenants.prefix(context) }),
    }),
  ];
}
