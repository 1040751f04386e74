import { AutonomyError } from '../errors.js';
import type { RunRecord } from '../run-store.js';
import { intersectToolSets, matchesAny } from '../tool-set.js';
import type { ActiveRun, AutonomyContext } from './context.js';
import { executeRun } from './execute.js';

/** What a spawn needs to know about its caller. */
export interface SpawnRequest {
  /** Session the child is spawned from (an ordinary session, or a run's own session). */
  parentSessionKey: string;
  task: string;
  agentId?: string | undefined;
  /** The agent of the parent, when the caller knows it (a tool call does). */
  parentAgentId?: string | undefined;
  /** Gateway client told of the end; a child of a run inherits its tree's. */
  clientId?: string | undefined;
  memoryTenant?: string | undefined;
  /** Replaces the capabilities (a steered respawn keeps the old run's). */
  capabilities?: readonly string[] | undefined;
}

/** The spawn answer (decisions.md). */
export interface SpawnResult {
  runId: string;
  sessionKey: string;
  status: 'running';
}

/** The run a session belongs to: active first, else the table. */
export async function runOfSession(ctx: AutonomyContext, sessionKey: string): Promise<RunRecord | undefined> {
  const runId = ctx.bySession.get(sessionKey);
  const active = runId === undefined ? undefined : ctx.active.get(runId);
  if (active) return active.record;
  // Only sub-agent sessions can belong to a run; others need no database read per tool call.
  if (!sessionKey.includes(':subagent:')) return undefined;
  return ctx.store.bySession(sessionKey);
}

/** The capabilities a run may use now: its own, narrowed to the default profile once evicted. */
export function effectiveCapabilities(ctx: AutonomyContext, record: RunRecord): string[] {
  if (!ctx.evicted.has(record.rootRunId)) return record.capabilities;
  return record.capabilities.filter((name) => matchesAny(ctx.settings.autonomy.defaultProfile, name));
}

/** How long a run's lease outlives the run's own timeout. */
const LEASE_GRACE_MS = 60_000;

function limit(name: string, message: string): never {
  throw new AutonomyError('LIMIT_EXCEEDED', message, { data: { limit: name } });
}

/** The tenant segment of a session key: a child lives under its parent's tenant. */
function tenantOf(sessionKey: string): string {
  const [tenant] = sessionKey.split(':');
  return tenant && tenant.length > 0 ? tenant : 'default';
}

/** Checks the limits (depth, children per parent, daemon-wide concurrency). */
async function checkLimits(ctx: AutonomyContext, parent: RunRecord | undefined, parentSessionKey: string) {
  const settings = ctx.settings.autonomy;
  const depth = parent ? parent.depth + 1 : 1;
  if (depth > settings.maxDepth) {
    limit('maxDepth', `Sub-agent depth limit reached: autonomy.maxDepth is ${settings.maxDepth}`);
  }
  const siblings = await ctx.store.list({
    status: 'running',
    limit: settings.maxChildrenPerParent + 1,
    ...(parent ? { parentRunId: parent.runId } : { parentSessionKey }),
  });
  if (siblings.length >= settings.maxChildrenPerParent) {
    limit(
      'maxChildrenPerParent',
      `Too many running sub-agents of this parent: autonomy.maxChildrenPerParent is ${settings.maxChildrenPerParent}`,
    );
  }
  if ((await ctx.store.countRunning()) >= settings.maxConcurrentRuns) {
    limit(
      'maxConcurrentRuns',
      `Too many sub-agent runs running daemon-wide: autonomy.maxConcurrentRuns is ${settings.maxConcurrentRuns}`,
    );
  }
  return depth;
}

/** The child's tools: its agent's, never wider than the parent's (its run's, or its agent's). */
function childCapabilities(
  ctx: AutonomyContext,
  agentId: string,
  parent: RunRecord | undefined,
  parentAgentId: string | undefined,
): string[] {
  const own = ctx.toolsOf(agentId);
  if (!own) throw new AutonomyError('INVALID_OPTIONS', `Agent not found: ${agentId}`, { data: { agentId } });
  if (parent) return intersectToolSets(own, effectiveCapabilities(ctx, parent));
  const parentTools = parentAgentId === undefined ? undefined : ctx.toolsOf(parentAgentId);
  return parentTools ? intersectToolSets(own, parentTools) : own;
}

/**
 * Spawns a run: checks the limits, fixes the child's tools, mints its lease, writes its row
 * (before the turn starts), then starts it in the background and answers at once.
 */
export async function spawnRun(ctx: AutonomyContext, request: SpawnRequest): Promise<SpawnResult> {
  if (ctx.closed) throw new AutonomyError('CLOSED', 'the autonomy service is closed');
  const parent = await runOfSession(ctx, request.parentSessionKey);
  // A killed or revoked run's session may not spawn: its capabilities are gone for good.
  if (parent && (parent.revoked || parent.status === 'killed' || parent.status === 'orphaned')) {
    throw new AutonomyError(
      'NOT_RUNNING',
      `parentKey: run ${parent.runId} of this session was ${parent.revoked ? 'revoked' : parent.status}; it may not spawn`,
      { data: { runId: parent.runId, status: parent.status, field: 'parentKey' } },
    );
  }
  const depth = await checkLimits(ctx, parent, request.parentSessionKey);
  const parentAgentId =
    request.parentAgentId ?? parent?.agentId ?? (await ctx.agentOf(request.parentSessionKey));
  const agentId = request.agentId ?? parentAgentId ?? 'default';
  let capabilities = childCapabilities(ctx, agentId, parent, parentAgentId);
  if (request.capabilities) capabilities = intersectToolSets(capabilities, request.capabilities);
  const runId = ctx.newId();
  const rootRunId = parent?.rootRunId ?? runId;
  const { lease } = await ctx.leases.mint({
    runId,
    rootRunId,
    agentId,
    capabilities,
    // The lease outlives the longest the run may take, so a long run never loses it midway.
    ttlMs: Math.max(ctx.settings.autonomy.leaseTtlMs, ctx.settings.autonomy.runTimeoutMs + LEASE_GRACE_MS),
    parentLeaseId: parent?.leaseId,
  });
  const record: RunRecord = {
    runId,
    parentRunId: parent?.runId,
    rootRunId,
    depth,
    agentId,
    sessionKey: `${tenantOf(request.parentSessionKey)}:subagent:${runId}`,
    parentSessionKey: request.parentSessionKey,
    task: request.task,
    status: 'running',
    endReason: undefined,
    clientId: parent?.clientId ?? request.clientId,
    memoryTenant: request.memoryTenant ?? parent?.memoryTenant,
    capabilities: lease.capabilities,
    leaseId: lease.leaseId,
    budget: { ...ctx.settings.autonomy.budget },
    tokens: { input: 0, output: 0, total: 0 },
    costUsd: 0,
    toolCalls: 0,
    response: undefined,
    error: undefined,
    revoked: false,
    evicted: ctx.evicted.has(rootRunId),
    resumed: 0,
    startedAt: ctx.now(),
    completedAt: undefined,
  };
  const cluster = ctx.cluster;
  await ctx.store.insert(
    record,
    cluster && { instanceId: cluster.coordinator.instanceId, leaseMs: cluster.leaseMs },
  );
  cluster?.fences.set(runId, 1);
  startRun(ctx, record);
  ctx.logger.info(
    { agentId, runId, step: 'spawn', itemCount: capabilities.length },
    `sub-agent run ${runId} started at depth ${depth}`,
  );
  return { runId, sessionKey: record.sessionKey, status: 'running' };
}

/** Starts executing a run recorded as running (a fresh spawn or a resume). */
export function startRun(ctx: AutonomyContext, record: RunRecord): ActiveRun {
  const run: ActiveRun = {
    record,
    controller: new AbortController(),
    steerQueue: [],
    processes: new Set(),
    done: Promise.resolve(),
    breached: false,
  };
  ctx.active.set(record.runId, run);
  ctx.bySession.set(record.sessionKey, record.runId);
  run.done = executeRun(ctx, run).catch((error: unknown) => {
    ctx.logger.error(
      {
        err: error,
        runId: record.runId,
        hint: 'a sub-agent run failed outside its turn; see the error',
        errorKind: 'internal',
      },
      'sub-agent run crashed',
    );
  });
  return run;
}
