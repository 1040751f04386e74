import { hasScope, type Scope } from '@agentd/auth-scopes';
import {
  agentIdSchema,
  type CronService,
  isCronWakegateError,
  scheduleInputSchema,
  wakeGateSchema,
} from '@agentd/cron-wakegate';
import { type MethodContext, RpcError } from '@agentd/rpc-core';
import { z } from 'zod';
import { methodsOf } from './define.js';
import { type TenantGuard, tenantGuard, tenantNames } from './tenancy.js';

const nameSchema = z.string().trim().min(1).max(200);

/**
 * Maps the scheduler's errors to the wire: field problems to -32602 naming the field,
 * unknown jobs to -32004 `Job not found: <name>`; anything else stays an internal error.
 */
export function cronRpcError(error: unknown): unknown {
  if (!isCronWakegateError(error)) return error;
  switch (error.code) {
    case 'INVALID_SCHEDULE':
    case 'INVALID_JOB':
    case 'JOB_EXISTS': {
      const issues = (error.data?.issues ?? []).map((issue) => ({
        path: issue.path,
        code: 'custom',
        message: issue.message,
      }));
      const summary = issues
        .map((issue) => `${issue.path.join('.') || 'params'}: ${issue.message}`)
        .join('; ');
      return RpcError.invalidParams(`Invalid params: ${summary || error.message}`, issues);
    }
    case 'JOB_NOT_FOUND':
      return RpcError.notFound('job', String(error.data?.name ?? ''));
    default:
      return error;
  }
}

/** Setting or changing a wake-gate runs a command on the host, so it needs `admin` even on the rpc-scoped cron.add/update. */
function requireAdminForGate(context: MethodContext): void {
  if (!hasScope(context.identity.scopes as readonly Scope[], 'admin'))
    throw RpcError.insufficientScope('admin');
}

/** cron.*: persisted jobs, their run records and manual fires (all rpc scope; gates need admin). */
export function cronMethods(deps: { cron: CronService; tenants?: TenantGuard }) {
  const { cron } = deps;
  const tenants = deps.tenants ?? tenantGuard();
  const { rpcMethod } = methodsOf('cron', cronRpcError);
  /**
   * Resolves a caller's job name: a tenant's jobs live under `<tenant>/`, so two tenants may
   * use the same name and neither learns the other's names from a "job exists" refusal; an
   * unbound caller (the operator) uses and sees the qualified name. A job of another owner (an
   * operator-made name under its prefix) is not found for a bound caller.
   */
  const mine = (context: MethodContext, name: string): string => {
    if (context.identity.tenant === undefined) return name;
    const qualified = tenantNames(context).qualify(name);
    tenants.owned(context, cron.get(qualified).tenant, 'job', name);
    return qualified;
  };
  const shown = (context: MethodContext, name: string): string => tenantNames(context).show(name);
  return [
    rpcMethod('list', {
      description: 'Every job with its schedule, next and last run, last error and wake-gate.',
      handler: (_params, context) => ({
        jobs: cron
          .list()
          .filter((job) => context.identity.tenant === undefined || job.tenant === context.identity.tenant)
          .map((job) => ({ ...job, name: shown(context, job.name) })),
      }),
    }),
    rpcMethod('add', {
      description:
        'Create a job (cron expression with IANA zone, interval of everyMs >= 1000, or once at an ISO 8601 time). A wakeGate needs admin scope.',
      params: z
        .object({
          name: nameSchema,
          message: z.string().min(1).max(100_000),
          agentId: agentIdSchema.optional(),
          schedule: scheduleInputSchema,
          enabled: z.boolean().optional(),
          timeoutMs: z.number().int().min(1000).max(86_400_000).optional(),
          wakeGate: wakeGateSchema.optional(),
        })
        .strict(),
      handler: async (params, context) => {
        if (params.wakeGate !== undefined) requireAdminForGate(context);
        // A tenant-bound caller's job belongs to its tenant and runs in its sessions.
        const tenant = context.identity.tenant;
        const job = await cron.add(
          tenant === undefined
            ? params
            : { ...params, name: tenantNames(context).qualify(params.name), tenant },
        );
        return { id: job.id, created: true, name: shown(context, job.name), nextRunAtMs: job.nextRunAtMs };
      },
    }),
    rpcMethod('update', {
      description:
        'Change the given fields of a job (others stay); enabled turns it on or off; wakeGate null removes the gate (admin scope).',
      params: z
        .object({
          name: nameSchema,
          message: z.string().min(1).max(100_000).optional(),
          agentId: agentIdSchema.optional(),
          schedule: scheduleInputSchema.optional(),
          enabled: z.boolean().optional(),
          timeoutMs: z.number().int().min(1000).max(86_400_000).nullable().optional(),
          wakeGate: wakeGateSchema.nullable().optional(),
        })
        .strict(),
      handler: async (params, context) => {
        const name = mine(context, params.name);
        if (params.wakeGate !== undefined) requireAdminForGate(context);
        // Moving a gated job to another agent moves where its admin-approved command runs.
        if (params.agentId !== undefined && cron.get(name).wakeGate) requireAdminForGate(context);
        const job = await cron.update({ ...params, name });
        return {
          id: job.id,
          updated: true,
          name: shown(context, job.name),
          enabled: job.enabled,
          nextRunAtMs: job.nextRunAtMs,
        };
      },
    }),
    rpcMethod('remove', {
      description: 'Delete a job; its run records stay for the reports.',
      params: z.object({ name: nameSchema }).strict(),
      handler: async ({ name }, context) => {
        const removed = await cron.remove(mine(context, name));
        return { removed: true, id: removed.id, name: shown(context, removed.name) };
      },
    }),
    rpcMethod('status', {
      description: 'One job: kind, next run (0 when none is scheduled), enabled, last run, last error.',
      params: z.object({ name: nameSchema }).strict(),
      handler: ({ name }, context) => {
        const job = cron.get(mine(context, name));
        return {
          id: job.id,
          name: shown(context, job.name),
          scheduleKind: job.scheduleKind,
          nextRunAtMs: job.nextRunAtMs,
          enabled: job.enabled,
          ...(job.lastRunAtMs !== undefined ? { lastRunAtMs: job.lastRunAtMs } : {}),
          ...(job.lastError !== undefined ? { lastError: job.lastError } : {}),
          running: job.running,
          consecutiveErrors: job.consecutiveErrors,
        };
      },
    }),
    rpcMethod('runs', {
      description: 'Run records of a job, newest first: every fire, including wake-gate skips and overlaps.',
      params: z
        .object({
          jobName: nameSchema,
          limit: z.number().int().min(1).max(1000).optional(),
          agentId: agentIdSchema.optional(),
        })
        .strict(),
      handler: async (params, context) => {
        const runs = await cron.runs({ ...params, jobName: mine(context, params.jobName) });
        return { runs: runs.map((run) => ({ ...run, jobName: shown(context, run.jobName) })) };
      },
    }),
    rpcMethod('run', {
      description:
        'Fire now: mode force (default) fires the named job whatever its schedule; mode due fires every overdue job.',
      params: z
        .object({ name: nameSchema.optional(), mode: z.enum(['force', 'due']).optional() })
        .strict()
        .superRefine((params, context) => {
          if ((params.mode ?? 'force') === 'force' && params.name === undefined) {
            context.addIssue({ code: 'custom', path: ['name'], message: 'required when mode is force' });
          }
        }),
      handler: ({ name, mode = 'force' }, context) => {
        if (mode === 'due') {
          tenants.unboundOnly(context);
          const { jobNames } = cron.runDue();
          return { triggered: true, mode, jobNames };
        }
        const { jobName } = cron.runNow(mine(context, name!));
        return { triggered: true, mode, jobName: shown(context, jobName) };
      },
    }),
  ];
}
