import { toFieldIssues } from '@agentd/errors';
import { randomUUID } from 'node:crypto';
import type { EventSink, Logger, ToolServerStatus } from '@agentd/contracts';
import { noopSecurityAudit, type SecurityAudit } from '@agentd/evidence/audit';
import type { Coordinator, Database } from '@agentd/storage';
import type { z } from 'zod';
import {
  type AutonomySection,
  autonomySectionSchema,
  type SecuritySection,
  securitySectionSchema,
} from './config.js';
import { AutonomyError } from './errors.js';
import { createAutonomyGate } from './gate.js';
import type { AutonomyGate } from './gate-types.js';
import type { AutonomyContext, Notifier, RunProcess, SubagentTurnRunner } from './internal/context.js';
import {
  killRun,
  killTree,
  mintChildLease,
  resolveTarget,
  revokeLeases,
  steerRun,
  waitForRuns,
} from './internal/control.js';
import { pickUpControl, renewOwned, TOPIC } from './internal/cluster.js';
import { type RecoveryResult, recoverRuns } from './internal/recover.js';
import { type IntrospectToolServer, toolServersFor } from './internal/tool-servers.js';
import {
  effectiveCapabilities,
  runOfSession,
  type SpawnRequest,
  type SpawnResult,
  spawnRun,
} from './internal/spawn.js';
import { LeaseStore, type LeaseView } from './lease-store.js';
import { noopLogger } from './logger.js';
import { autonomyMigrationSet, MIGRATION_PACKAGE } from './migrations.js';
import { type RunRecord, type RunStatus, RunStore } from './run-store.js';
import { type RunView, runView } from './run-view.js';

export type { Notifier, RunProcess, SubagentTurnRunner } from './internal/context.js';
export type { RecoveryResult } from './internal/recover.js';
export type { IntrospectToolServer } from './internal/tool-servers.js';
export type { SpawnRequest, SpawnResult } from './internal/spawn.js';

/** Options of {@link createAutonomyService}. */
export interface AutonomyServiceOptions {
  db: Database;
  /**
   * The cluster coordinator (`openCoordination` of `@agentd/storage`), started by the caller.
   * Required on PostgreSQL: running runs are owned and leased by the instance executing them,
   * a start takes over only the runs of gone instances, and kill, revoke and steer reach the
   * owner. On libsql it may be left out: everything stays in this process.
   */
  coordinator?: Coordinator | undefined;
  /** Cluster mode: how long a run's ownership lasts without renewal (renewed every third). @default 15000 */
  runLeaseMs?: number | undefined;
  /** The agent runtime's turn runner, read when a run starts (it may be created after this service). */
  runner: () => SubagentTurnRunner;
  /** Concrete tool names an agent may call, or `undefined` for an unknown agent. */
  toolsOf: (agentId: string) => string[] | undefined;
  /** The agent of an existing session, when it exists. @default none known */
  agentOf?: (sessionKey: string) => Promise<string | undefined>;
  /** Cost in USD a session's model calls have had since `sinceMs`. @default 0 */
  costOf?: (sessionKey: string, sinceMs: number) => Promise<number>;
  /** Records a run's end on its parent session. @default nothing more than the run table */
  recordOnParent?: (parentSessionKey: string, note: string) => Promise<void>;
  autonomy?: z.input<typeof autonomySectionSchema>;
  security?: z.input<typeof securitySectionSchema>;
  audit?: SecurityAudit;
  events?: EventSink;
  logger?: Logger;
  now?: () => number;
  newId?: () => string;
}

/**
 * Who asks `introspect`: an agent in its session (a tool call; `agentId` narrows the tool
 * servers to its own), or a gateway client.
 */
export type IntrospectCaller =
  | { sessionKey: string; agentId?: string | undefined }
  | { clientId: string; keyPrefix?: string | undefined };

/** One run in the `capabilities.introspect` answer. */
export interface IntrospectRun {
  runId: string;
  rootRunId: string;
  agentId: string;
  status: RunStatus;
  capabilities: string[];
  evicted: boolean;
  lease: { leaseId: string; expiresAt: number; revoked: boolean } | undefined;
  budget: {
    limits: { maxTokens: number; maxCostUsd: number; maxToolCalls: number };
    used: { tokens: number; costUsd: number; toolCalls: number };
    remaining: { tokens: number; costUsd: number; toolCalls: number };
  };
}

/** The `capabilities.introspect` answer. */
export interface IntrospectResult {
  runs: IntrospectRun[];
  quota: { runningRuns: number; maxConcurrentRuns: number; maxDepth: number; maxChildrenPerParent: number };
  /** The MCP servers under `mcp.servers`: state, the tools the caller may call, last error. */
  mcp: { servers: IntrospectToolServer[] };
}

/** The sub-agent runs, their durable table, leases and run control. */
export interface AutonomyService {
  /** Applies migrations, loads the evicted set and settles runs a previous process left running. */
  start(): Promise<RecoveryResult>;
  /** Spawns a child run and answers at once with `{runId, sessionKey, status: 'running'}`. */
  spawn(request: SpawnRequest): Promise<SpawnResult>;
  /** A run's record (by run id or session key). @throws `RUN_NOT_FOUND` */
  status(target: string): Promise<RunView>;
  /** Runs, newest first. */
  list(filter?: {
    status?: RunStatus | undefined;
    limit?: number | undefined;
    keyPrefix?: string | undefined;
    parentSessionKey?: string | undefined;
  }): Promise<RunView[]>;
  /** Kills a run and its descendants (aborts their turns, kills their processes, revokes their leases). */
  kill(target: string, reason?: string): Promise<{ runId: string; status: RunStatus; killed: number }>;
  /** Steers a running run (see `security.agentToAgent.steerInject`); one call per target every 2 s. */
  steer(target: string, message: string): ReturnType<typeof steerRun>;
  /** Revokes a lease (and those below it) or every lease of a tree: `{revoked}` leases. */
  revoke(target: { leaseId: string } | { rootRunId: string }): Promise<{ revoked: number }>;
  /** Aborts a whole run tree and revokes its leases: `{killed}` runs. */
  killTree(rootRunId: string): Promise<{ killed: number }>;
  /** Marks a tree evicted: its next gate decisions use the default profile. */
  evict(rootRunId: string): Promise<{ evicted: true }>;
  /** The caller's own runs, budgets and quota (identity from the caller, never a parameter). */
  introspect(caller: IntrospectCaller): Promise<IntrospectResult>;
  /** Waits until the runs have ended (or `timeoutMs` / `signal`); answers their records. */
  wait(runIds: readonly string[], options: { timeoutMs: number; signal?: AbortSignal }): Promise<RunView[]>;
  /** Ties a process a tool started in `sessionKey` to that session's run: killed with the run. */
  trackProcess(sessionKey: string, child: RunProcess): boolean;
  /** The lease-authenticated surface: what a capability socket calls with a presented secret. */
  readonly leases: Pick<LeaseStore, 'validate' | 'renew' | 'get'>;
  /**
   * Mints a child lease under a running run's lease (the per-run lease a jailed script or another
   * lease-authenticated client presents): `capabilities` must be a subset of the run's current
   * set, it expires with `ttlMs` (default `autonomy.leaseTtlMs`), and revoking or killing the
   * run revokes it through the parent link. The secret is answered once and never stored.
   * @throws `RUN_NOT_FOUND`, `NOT_RUNNING`, `INVALID_OPTIONS` (capabilities wider than the run's)
   */
  mintChildLease(
    target: string,
    request: { capabilities: readonly string[]; ttlMs?: number },
  ): Promise<{ lease: LeaseView; secret: string }>;
  /** The run a session belongs to, if any. */
  runOfSession(sessionKey: string): Promise<RunView | undefined>;
  /** The tool runner gate (lease, capability, budget, denial breaker). */
  gate(): AutonomyGate;
  /** Where `session.completed` notifications go (the gateway, once it exists). */
  setNotifier(notifier: Notifier | undefined): void;
  /** Where `introspect` reads the MCP servers' status (the daemon's tool host, once it exists). */
  useToolServers(source: (() => readonly ToolServerStatus[]) | undefined): void;
  /** Applies a changed `autonomy` or `security` section from the next spawn and gate decision. */
  applyConfig(config: { autonomy?: unknown; security?: unknown }): void;
  /** Runs executing in this process now. */
  readonly activeRuns: number;
  /** Stops taking spawns; running runs are aborted and left `running` for the next start. */
  close(): Promise<void>;
}

function parse<T>(schema: z.ZodType<T>, value: unknown, field: string): T {
  const checked = schema.safeParse(value ?? {});
  if (checked.success) return checked.data;
  const issues = toFieldIssues(checked.error.issues, [field]);
  throw new AutonomyError(
    'INVALID_OPTIONS',
    `${issues[0]?.path.join('.') ?? field}: ${issues[0]?.message ?? 'invalid'}`,
    { data: { issues } },
  );
}

/** Creates the service. Call `start()` before use. */
/** The shared state of a service, options validated and defaulted. */
function buildContext(options: AutonomyServiceOptions): AutonomyContext {
  const now = options.now ?? Date.now;
  const coordinator = options.coordinator;
  const runLeaseMs = options.runLeaseMs ?? 15_000;
  if (!Number.isSafeInteger(runLeaseMs) || runLeaseMs < 100) {
    throw new AutonomyError('INVALID_OPTIONS', 'runLeaseMs: an integer of at least 100');
  }
  if (options.db.dialect === 'pg' && coordinator?.mode !== 'postgres') {
    throw new AutonomyError(
      'INVALID_OPTIONS',
      'coordinator: autonomy on PostgreSQL needs the cluster coordinator, so that runs are owned and reached across instances',
    );
  }
  const newId = options.newId ?? (() => randomUUID());
  return {
    store: new RunStore(options.db),
    leases: new LeaseStore(options.db, now, newId),
    settings: {
      autonomy: parse<AutonomySection>(autonomySectionSchema, options.autonomy, 'autonomy'),
      security: parse<SecuritySection>(securitySectionSchema, options.security, 'security'),
    },
    runner: options.runner,
    toolsOf: options.toolsOf,
    agentOf: options.agentOf ?? (async () => undefined),
    costOf: options.costOf ?? (async () => 0),
    recordOnParent: options.recordOnParent ?? (async () => undefined),
    notifier: { current: undefined },
    toolServers: { current: undefined },
    audit: options.audit ?? noopSecurityAudit,
    events: options.events ?? { emit: () => undefined },
    logger: options.logger ?? noopLogger,
    now,
    newId,
    active: new Map(),
    bySession: new Map(),
    denials: new Map(),
    steeredAt: new Map(),
    evicted: new Set(),
    closed: false,
    cluster:
      coordinator?.mode === 'postgres'
        ? {
            db: options.db,
            coordinator,
            rows: coordinator.ownedRows({
              table: 'autonomy_runs',
              idColumn: 'run_id',
              leaseMs: runLeaseMs,
            }),
            leaseMs: runLeaseMs,
            fences: new Map(),
          }
        : undefined,
  };
}

const runLeaseOf = (context: AutonomyContext) => context.cluster?.leaseMs ?? 15_000;

export function createAutonomyService(options: AutonomyServiceOptions): AutonomyService {
  const ctx = buildContext(options);
  let stopCluster: (() => void) | undefined;
  // Cluster mode: control notices are picked up at once (or at the poll), and every third of a
  // lease this instance renews its runs and takes over those whose owner is gone.
  const startClusterLoop = (context: AutonomyContext, coordinator: Coordinator) => {
    const unwatch = coordinator.bus.watch(TOPIC, () => pickUpControl(context));
    let ticking = false;
    const timer = setInterval(
      () => {
        if (ticking || context.closed || context.cluster === undefined) return;
        ticking = true;
        const cluster = context.cluster;
        renewOwned(context, cluster)
          .then(() => recoverRuns(context))
          .catch((error: unknown) =>
            context.logger.warn(
              { err: error, hint: 'check that the PostgreSQL server is reachable', errorKind: 'dependency' },
              'sub-agent run lease renewal or takeover failed',
            ),
          )
          .finally(() => {
            ticking = false;
          });
      },
      Math.floor(runLeaseOf(context) / 3),
    );
    timer.unref();
    stopCluster = () => {
      unwatch();
      clearInterval(timer);
    };
  };
  const { now } = ctx;
  const gate = createAutonomyGate(ctx);
  // Spawns run one at a time, so two cannot both pass a limit that only one fits under.
  let spawning: Promise<unknown> = Promise.resolve();
  const spawn = (request: SpawnRequest): Promise<SpawnResult> => {
    const next = spawning.then(() => spawnRun(ctx, request));
    spawning = next.catch(() => undefined);
    return next;
  };
  const audit = (action: string, refs: Record<string, unknown>) =>
    ctx.audit.emit({
      kind: 'lease',
      classification: 'allowed',
      outcome: 'success',
      severity: 'medium',
      action,
      ...refs,
    });

  return {
    async start() {
      await options.db.migrate(MIGRATION_PACKAGE, autonomyMigrationSet);
      for (const root of await ctx.store.evictedRoots()) ctx.evicted.add(root);
      const recovered = await recoverRuns(ctx);
      if (ctx.cluster !== undefined) startClusterLoop(ctx, ctx.cluster.coordinator);
      ctx.logger.info(
        { step: 'start', ...recovered },
        `autonomy started: ${recovered.resumed} runs resumed, ${recovered.orphaned} orphaned`,
      );
      return recovered;
    },
    spawn,
    async status(target) {
      return runView(await resolveTarget(ctx, target), now());
    },
    async list(filter = {}) {
      const records = await ctx.store.list({ ...filter, limit: filter.limit ?? 50 });
      return records.map((record) => runView(record, now()));
    },
    async kill(target, reason) {
      const record = await resolveTarget(ctx, target);
      const killed = await killRun(
        ctx,
        record,
        'killed',
        reason ? `killed: ${reason.slice(0, 200)}` : undefined,
      );
      audit('subagent.kill', { runId: record.runId, rootRunId: record.rootRunId, count: killed });
      const after = await resolveTarget(ctx, record.runId);
      return { runId: record.runId, status: after.status, killed };
    },
    steer: (target, message) => steerRun(ctx, target, message, spawn),
    async revoke(target) {
      const revoked = await revokeLeases(ctx, target);
      audit('lease.revoke', { ...target, count: revoked });
      return { revoked };
    },
    async killTree(rootRunId) {
      const killed = await killTree(ctx, rootRunId);
      audit('run.kill', { rootRunId, count: killed });
      return { killed };
    },
    async evict(rootRunId) {
      if ((await ctx.store.markEvicted(rootRunId, now())) === 0) {
        throw new AutonomyError('RUN_NOT_FOUND', `Run not found: ${rootRunId}`, {
          data: { target: rootRunId },
        });
      }
      ctx.evicted.add(rootRunId);
      audit('autonomy.evict', { rootRunId });
      return { evicted: true };
    },
    introspect: (caller) => introspect(ctx, caller),
    wait: (runIds, options) => waitForRuns(ctx, runIds, options),
    trackProcess(sessionKey, child) {
      const run = ctx.active.get(ctx.bySession.get(sessionKey) ?? '');
      if (!run) return false;
      run.processes.add(child);
      return true;
    },
    leases: ctx.leases,
    async mintChildLease(target, request) {
      const minted = await mintChildLease(ctx, target, request);
      audit('lease.mint', {
        runId: minted.lease.runId,
        rootRunId: minted.lease.rootRunId,
        leaseId: minted.lease.leaseId,
      });
      return minted;
    },
    async runOfSession(sessionKey) {
      const record = await runOfSession(ctx, sessionKey);
      return record ? runView(record, now()) : undefined;
    },
    gate: () => gate,
    setNotifier(notifier) {
      ctx.notifier.current = notifier;
    },
    useToolServers(source) {
      ctx.toolServers.current = source;
    },
    applyConfig(config) {
      const autonomy =
        config.autonomy === undefined
          ? ctx.settings.autonomy
          : parse(autonomySectionSchema, config.autonomy, 'autonomy');
      const security =
        config.security === undefined
          ? ctx.settings.security
          : parse(securitySectionSchema, config.security, 'security');
      ctx.settings = { autonomy, security };
    },
    get activeRuns() {
      return ctx.active.size;
    },
    async close() {
      ctx.closed = true;
      stopCluster?.();
      const runs = [...ctx.active.values()];
      // A stop is not a kill: the rows stay `running`, so the next start resumes or orphans them.
      for (const run of runs) {
        ctx.active.delete(run.record.runId);
        run.controller.abort('shutdown');
      }
      await Promise.all(runs.map((run) => run.done));
      // Handed back at once, so another instance takes them over without waiting out the lease.
      for (const [runId, fence] of ctx.cluster?.fences ?? []) {
        await ctx.cluster?.rows.complete(runId, fence).catch(() => false);
      }
      ctx.cluster?.fences.clear();
    },
  };
}

async function introspect(ctx: AutonomyContext, caller: IntrospectCaller): Promise<IntrospectResult> {
  let records: RunRecord[];
  let servers: IntrospectToolServer[];
  if ('sessionKey' in caller) {
    const own = await runOfSession(ctx, caller.sessionKey);
    records = own ? [own] : [];
    const agentId = own?.agentId ?? caller.agentId;
    // An agent sees the servers configured for it; a session of no known agent sees none.
    servers =
      agentId === undefined
        ? []
        : toolServersFor(ctx, { agentId, capabilities: own ? effectiveCapabilities(ctx, own) : undefined });
  } else {
    servers = toolServersFor(ctx, undefined);
    records = (await ctx.store.list({ status: 'running', limit: 100, keyPrefix: caller.keyPrefix })).filter(
      (record) => record.clientId === caller.clientId,
    );
  }
  const runs: IntrospectRun[] = [];
  for (const record of records) {
    const lease = record.leaseId ? await ctx.leases.get(record.leaseId) : undefined;
    const { budget } = record;
    runs.push({
      runId: record.runId,
      rootRunId: record.rootRunId,
      agentId: record.agentId,
      status: record.status,
      capabilities: effectiveCapabilities(ctx, record),
      evicted: ctx.evicted.has(record.rootRunId),
      lease: lease && {
        leaseId: lease.leaseId,
        expiresAt: lease.expiresAt,
        revoked: lease.revokedAt !== undefined,
      },
      budget: {
        limits: { ...budget },
        used: { tokens: record.tokens.total, costUsd: record.costUsd, toolCalls: record.toolCalls },
        remaining: {
          tokens: Math.max(0, budget.maxTokens - record.tokens.total),
          costUsd: Math.max(0, budget.maxCostUsd - record.costUsd),
          toolCalls: Math.max(0, budget.maxToolCalls - record.toolCalls),
        },
      },
    });
  }
  const settings = ctx.settings.autonomy;
  return {
    runs,
    quota: {
      runningRuns: await ctx.store.countRunning(),
      maxConcurrentRuns: settings.maxConcurrentRuns,
      maxDepth: settings.maxDepth,
      maxChildrenPerParent: settings.maxChildrenPerParent,
    },
    mcp: { servers },
  };
}

export type { LeaseView };
