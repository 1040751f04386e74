import { randomUUID } from 'node:crypto';
import type { Logger } from '@agentd/contracts';
import type { Database } from '@agentd/storage';
import { z } from 'zod';
import {
  type ApprovalsConfig,
  type ApprovalsConfigInput,
  approvalsSectionSchema,
  type CompiledRules,
  compileRules,
} from './config.js';
import { argsFingerprint, digestArgs } from './digest.js';
import { ApprovalsError } from './errors.js';
import { DecisionCache } from './internal/decision-cache.js';
import { type RequestRow, RequestStore } from './internal/store.js';
import { approvalsMigrations, MIGRATION_PACKAGE } from './migrations.js';
import type {
  ApprovalAuditEvent,
  ApprovalAuditSink,
  ApprovalCheck,
  ApprovalEvent,
  ApprovalResolution,
  ApprovalVerdict,
  PendingApproval,
} from './types.js';

/** Timer functions, injectable so tests drive timeouts with their own clock. */
export interface ApprovalTimers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Options of {@link createApprovalService}. */
export interface ApprovalServiceOptions {
  /** The libsql database; the service migrates its table on `start()`. */
  db: Database;
  /** The `approvals` section. @default {} (off) */
  config?: ApprovalsConfigInput | undefined;
  /** Receives an `audit:event` (kind `approval`) for every decision. @default none */
  audit?: ApprovalAuditSink | undefined;
  logger?: Logger | undefined;
  /** Clock. @default Date.now */
  now?: (() => number) | undefined;
  /** Request ids. @default `apr-<uuid>` */
  ids?: (() => string) | undefined;
  /** @default the global timers (unref'd, so a pending request never keeps a process alive) */
  timers?: ApprovalTimers | undefined;
}

/** Who resolves and why (`admin.approval.resolve` / `resolveAll`). */
export interface ResolveOptions {
  reason?: string | undefined;
  /** @default 'operator' */
  resolvedBy?: string | undefined;
  /** Id of the caller's token (never the secret), kept in the audit row as `caller`. */
  caller?: string | undefined;
}

/** The approval gates' state: rules, pending requests (persisted), decision caches. */
export interface ApprovalService {
  /** Migrates the table and denies, with reason `restart`, requests a previous process left pending. */
  start(): Promise<void>;
  /** Decides one tool call; waits (until resolved, timed out or `signal` aborts) when it needs approval. */
  check(call: ApprovalCheck): Promise<ApprovalVerdict>;
  /** Pending requests, oldest first. */
  pending(): PendingApproval[];
  /** Decides one request; a request already decided is answered as it was (`alreadyResolved`). */
  resolve(id: string, approved: boolean, options?: ResolveOptions): Promise<ApprovalResolution>;
  /** Decides every pending request, or those of one session. */
  resolveAll(
    approved: boolean,
    options?: ResolveOptions & { sessionKey?: string | undefined },
  ): Promise<{ resolved: number; requestIds: string[] }>;
  /** Forgets every cached denial; answers how many live ones there were. */
  clearDenialCache(): number;
  /** Forgets the cached decisions of one session (`session.reset`); answers how many. */
  clearSession(sessionKey: string): number;
  /** Takes a new `approvals` section; pending requests keep the expiry they were given. */
  applyConfig(section: ApprovalsConfigInput): void;
  /** The section in force. */
  readonly config: ApprovalsConfig;
  /** Subscribes to `requested` / `resolved`; answers the unsubscribe function. */
  onEvent(listener: (event: ApprovalEvent) => void): () => void;
  /**
   * Stops deciding: waiting calls are denied with reason `shutdown` while their rows stay
   * pending (the next start denies them with `restart`). Idempotent.
   */
  close(): Promise<void>;
}

/** A request waiting in this process, with the calls that wait on it. */
interface Entry {
  row: RequestRow;
  joinKey: string;
  waiters: Set<(verdict: ApprovalVerdict) => void>;
  timer: unknown;
  /** The row's insert; a decision is written after it. */
  written: Promise<boolean>;
  /** Set once the row is written: only then is the request listed. */
  recorded: boolean;
}

const optionsSchema = z.object({
  db: z.custom<Database>((value) => typeof (value as Database | null)?.execute === 'function', {
    message: 'expected an open @agentd/storage Database',
  }),
  config: z.unknown().optional(),
  audit: z
    .custom<ApprovalAuditSink>((value) => typeof (value as ApprovalAuditSink).emit === 'function')
    .optional(),
  logger: z.unknown().optional(),
  now: z.function().optional(),
  ids: z.function().optional(),
  timers: z.unknown().optional(),
});

/** How many recent decisions are kept in memory (see `decided`). */
const RECENT_DECISIONS = 1_000;
/** Decided rows older than this are deleted at start. */
const KEEP_DECIDED_MS = 30 * 86_400_000;

const ignore = (): void => {};
const silent: Logger = { debug: ignore, info: ignore, warn: ignore, error: ignore };
const globalTimers: ApprovalTimers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

function parseSection(section: unknown): ApprovalsConfig {
  const parsed = approvalsSectionSchema.safeParse(section ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ApprovalsError(
      'INVALID_OPTIONS',
      `approvals.${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`,
      {
        data: { issues: parsed.error.issues.map((i) => ({ path: i.path.map(String), message: i.message })) },
      },
    );
  }
  return parsed.data;
}

/** Creates the approval service; call `start()` before `check`. */
export function createApprovalService(options: ApprovalServiceOptions): ApprovalService {
  const valid = optionsSchema.safeParse(options);
  if (!valid.success) {
    throw new ApprovalsError(
      'INVALID_OPTIONS',
      `createApprovalService: ${valid.error.issues[0]?.path.join('.')}: ${valid.error.issues[0]?.message}`,
    );
  }
  const now = options.now ?? Date.now;
  const ids = options.ids ?? (() => `apr-${randomUUID()}`);
  const timers = options.timers ?? globalTimers;
  const logger = options.logger ?? silent;
  const store = new RequestStore(options.db);
  const listeners = new Set<(event: ApprovalEvent) => void>();
  const approvals = new DecisionCache<true>(now);
  const denials = new DecisionCache<string>(now);
  const entries = new Map<string, Entry>();
  // The latest decisions, so a second resolve of an id answers what won even before its row is written.
  const decided = new Map<string, ApprovalResolution>();
  const remember = (resolution: ApprovalResolution): void => {
    decided.set(resolution.id, resolution);
    if (decided.size > RECENT_DECISIONS) decided.delete(decided.keys().next().value as string);
  };
  const byJoinKey = new Map<string, Entry>();
  let config = parseSection(options.config);
  let rules: CompiledRules = compileRules(config);
  let closed = false;

  const audit = (
    event: Pick<ApprovalAuditEvent, 'classification' | 'outcome' | 'severity'> & Record<string, unknown>,
  ): void => {
    try {
      options.audit?.emit({ kind: 'approval', ...event });
    } catch {
      // The sink promises not to throw; a decision never fails because auditing did.
    }
  };

  const announce = (event: ApprovalEvent): void => {
    for (const listener of listeners) {
      try {
        listener(event);
      } catch (err) {
        logger.warn(
          { err, hint: 'an approval event listener threw; the decision stands', errorKind: 'internal' },
          'approval event not delivered',
        );
      }
    }
  };

  const pendingView = (row: RequestRow, waiting: number): PendingApproval => ({
    id: row.id,
    sessionKey: row.sessionKey,
    agentId: row.agentId,
    toolName: row.toolName,
    argsDigest: row.argsDigest,
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
    ageMs: Math.max(0, now() - row.createdAt),
    waiting,
  });

  const resolutionOf = (row: RequestRow): ApprovalResolution => ({
    id: row.id,
    sessionKey: row.sessionKey,
    agentId: row.agentId,
    toolName: row.toolName,
    approved: row.status === 'approved',
    status: row.status === 'approved' ? 'approved' : 'denied',
    ...(row.reason !== undefined ? { reason: row.reason } : {}),
    resolvedBy: row.resolvedBy ?? 'system',
    resolvedAt: row.resolvedAt ?? now(),
  });

  /** Audits a decided request: `reasonKind` is a closed token, the operator's text stays out of the row. */
  const auditDecision = (row: RequestRow, reasonKind: string, caller?: string): void => {
    const approved = row.status === 'approved';
    audit({
      classification: approved ? 'allowed' : 'denied',
      outcome: approved ? 'success' : 'failure',
      severity: approved ? 'medium' : 'low',
      agentId: row.agentId,
      sessionKey: row.sessionKey,
      action: 'resolve',
      requestId: row.id,
      toolName: row.toolName,
      reason: reasonKind,
      resolvedBy: row.resolvedBy,
      ...(caller !== undefined ? { caller } : {}),
    });
  };

  /**
   * Decides a request waiting in this process: off the pending maps at once (so a second
   * decision finds nothing), then the caches, the waiting calls, the row, the audit and the
   * announcement. `reasonKind` is `operator` or a system reason.
   */
  async function decide(
    entry: Entry,
    approved: boolean,
    decision: {
      reason: string | undefined;
      resolvedBy: string;
      reasonKind: string;
      caller?: string | undefined;
    },
  ): Promise<ApprovalResolution> {
    entries.delete(entry.row.id);
    byJoinKey.delete(entry.joinKey);
    timers.clearTimeout(entry.timer);
    const row: RequestRow = {
      ...entry.row,
      status: approved ? 'approved' : 'denied',
      reason: decision.reason,
      resolvedBy: decision.resolvedBy,
      resolvedAt: now(),
    };
    const { sessionKey, toolName } = row;
    // A request the service itself could not keep decides nothing about the tool: no cache.
    if (approved) {
      approvals.set(sessionKey, toolName, true, config.approvalCacheMs);
      denials.delete(sessionKey, toolName);
    } else if (decision.reasonKind !== 'unavailable') {
      denials.set(sessionKey, toolName, decision.reason ?? 'denied', config.denialCacheMs);
      approvals.delete(sessionKey, toolName);
    }
    const verdict: ApprovalVerdict = approved
      ? { allow: true, via: 'approved', requestId: row.id }
      : { allow: false, via: 'denied', reason: decision.reason ?? 'denied', requestId: row.id };
    for (const wake of entry.waiters) wake(verdict);
    entry.waiters.clear();
    const resolution = resolutionOf(row);
    remember(resolution);
    if (await entry.written) {
      await store
        .decide(row.id, {
          status: row.status as 'approved' | 'denied',
          ...decision,
          at: row.resolvedAt ?? now(),
        })
        .catch((err: unknown) =>
          logger.error(
            {
              err,
              requestId: row.id,
              hint: 'check the database; the decision was applied in memory',
              errorKind: 'resource',
            },
            'approval decision not recorded',
          ),
        );
    }
    auditDecision(row, decision.reasonKind, decision.caller);
    announce({ type: 'resolved', resolution });
    return resolution;
  }

  /** Makes a request (or joins the identical one pending) and waits for its decision. */
  function ask(call: ApprovalCheck): Promise<ApprovalVerdict> {
    const fingerprint = argsFingerprint(call.input);
    const joinKey = [call.sessionKey, call.agentId, call.toolName, fingerprint].join('\u0000');
    let entry = byJoinKey.get(joinKey);
    if (!entry) {
      const createdAt = now();
      const row: RequestRow = {
        id: ids(),
        sessionKey: call.sessionKey,
        agentId: call.agentId,
        toolName: call.toolName,
        fingerprint,
        argsDigest: digestArgs(call.input),
        status: 'pending',
        reason: undefined,
        resolvedBy: undefined,
        createdAt,
        expiresAt: createdAt + config.timeoutMs,
        resolvedAt: undefined,
      };
      const created: Entry = {
        row,
        joinKey,
        waiters: new Set(),
        timer: undefined,
        written: Promise.resolve(false),
        recorded: false,
      };
      entry = created;
      entries.set(row.id, created);
      byJoinKey.set(joinKey, created);
      created.timer = timers.setTimeout(() => {
        if (entries.get(row.id) === created) {
          void decide(created, false, { reason: 'timeout', resolvedBy: 'system', reasonKind: 'timeout' });
        }
      }, config.timeoutMs);
      created.written = store.insert(row).then(
        () => {
          created.recorded = true;
          // Listed, audited and announced once durable: what an operator sees survives a crash.
          if (entries.get(row.id) === created) {
            audit({
              classification: 'escalated',
              outcome: 'success',
              severity: 'low',
              agentId: row.agentId,
              sessionKey: row.sessionKey,
              action: 'request',
              requestId: row.id,
              toolName: row.toolName,
            });
            announce({ type: 'requested', request: pendingView(row, created.waiters.size) });
          }
          return true;
        },
        (err: unknown) => {
          logger.error(
            {
              err,
              hint: 'check the database; the tool call was refused (fail closed)',
              errorKind: 'resource',
            },
            'approval request not recorded',
          );
          if (entries.get(row.id) === created) {
            void decide(created, false, {
              reason: 'unavailable',
              resolvedBy: 'system',
              reasonKind: 'unavailable',
            });
          }
          return false;
        },
      );
    }
    return wait(entry, call.signal);
  }

  function wait(entry: Entry, signal: AbortSignal | undefined): Promise<ApprovalVerdict> {
    return new Promise((resolve) => {
      const onAbort = (): void => {
        // The turn ended; the request stays pending until decided or timed out, so a retry of
        // the same call joins it and an operator's late approval still reaches the cache.
        entry.waiters.delete(wake);
        resolve({ allow: false, via: 'denied', reason: 'cancelled', requestId: entry.row.id });
      };
      const wake = (verdict: ApprovalVerdict): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve(verdict);
      };
      if (signal?.aborted) {
        onAbort();
        return;
      }
      entry.waiters.add(wake);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  return {
    async start() {
      await options.db.migrate(MIGRATION_PACKAGE, approvalsMigrations);
      await store.pruneDecided(now() - KEEP_DECIDED_MS);
      // Agent turns do not survive a restart, so a request left pending has nobody waiting on it.
      for (const row of await store.pending()) {
        const at = now();
        if (!(await store.decide(row.id, { status: 'denied', reason: 'restart', resolvedBy: 'system', at })))
          continue;
        const denied: RequestRow = {
          ...row,
          status: 'denied',
          reason: 'restart',
          resolvedBy: 'system',
          resolvedAt: at,
        };
        auditDecision(denied, 'restart');
        announce({ type: 'resolved', resolution: resolutionOf(denied) });
        logger.info(
          { requestId: row.id, toolName: row.toolName, reason: 'restart' },
          'approval request denied at start',
        );
      }
    },

    async check(call) {
      if (closed) return { allow: false, via: 'denied', reason: 'shutdown' };
      if (!config.enabled) return { allow: true, via: 'off' };
      const { mode, rule } = rules.modeOf(call.toolName);
      if (mode === 'auto') return { allow: true, via: 'auto' };
      const who = { agentId: call.agentId, sessionKey: call.sessionKey, toolName: call.toolName };
      if (mode === 'deny') {
        audit({
          classification: 'denied',
          outcome: 'failure',
          severity: 'low',
          ...who,
          action: 'rule',
          rule,
          reason: 'rule',
        });
        return { allow: false, via: 'rule', reason: 'rule' };
      }
      if (approvals.get(call.sessionKey, call.toolName)) {
        audit({
          classification: 'allowed',
          outcome: 'success',
          severity: 'info',
          ...who,
          action: 'cache',
          reason: 'approval_cache',
        });
        return { allow: true, via: 'approval_cache' };
      }
      const denied = denials.get(call.sessionKey, call.toolName);
      if (denied !== undefined) {
        audit({
          classification: 'denied',
          outcome: 'failure',
          severity: 'info',
          ...who,
          action: 'cache',
          reason: 'denial_cache',
        });
        return { allow: false, via: 'denial_cache', reason: denied };
      }
      // A turn that has already ended would run nothing: no request is made for it.
      if (call.signal?.aborted) return { allow: false, via: 'denied', reason: 'cancelled' };
      return ask(call);
    },

    pending() {
      return [...entries.values()]
        .filter((entry) => entry.recorded)
        .map((entry) => pendingView(entry.row, entry.waiters.size))
        .sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));
    },

    async resolve(id, approved, resolveOptions = {}) {
      const resolvedBy = resolveOptions.resolvedBy ?? 'operator';
      const entry = entries.get(id);
      if (entry) {
        return decide(entry, approved, {
          reason: resolveOptions.reason,
          resolvedBy,
          reasonKind: 'operator',
          caller: resolveOptions.caller,
        });
      }
      // Decided moments ago: its row may not be updated yet, so memory answers first.
      const recent = decided.get(id);
      if (recent) return { ...recent, alreadyResolved: true };
      const row = await store.get(id);
      if (!row || row.status === 'pending') {
        // A pending row with no request in memory was made by a process that has not started this
        // service (start() decides every earlier one): not a request this service can resolve.
        throw new ApprovalsError('REQUEST_NOT_FOUND', `Approval request not found: ${id}`, { data: { id } });
      }
      return { ...resolutionOf(row), alreadyResolved: true };
    },

    async resolveAll(approved, resolveOptions = {}) {
      const chosen = [...entries.values()].filter(
        (entry) =>
          resolveOptions.sessionKey === undefined || entry.row.sessionKey === resolveOptions.sessionKey,
      );
      const decision = {
        reason: resolveOptions.reason,
        resolvedBy: resolveOptions.resolvedBy ?? 'operator',
        reasonKind: 'operator',
        caller: resolveOptions.caller,
      };
      const resolutions = await Promise.all(chosen.map((entry) => decide(entry, approved, decision)));
      return { resolved: resolutions.length, requestIds: resolutions.map((resolution) => resolution.id) };
    },

    clearDenialCache() {
      const cleared = denials.clear();
      audit({
        classification: 'allowed',
        outcome: 'success',
        severity: 'low',
        action: 'clear_denial_cache',
        cleared,
      });
      return cleared;
    },

    clearSession(sessionKey) {
      return approvals.clearSession(sessionKey) + denials.clearSession(sessionKey);
    },

    applyConfig(section) {
      config = parseSection(section);
      rules = compileRules(config);
    },

    get config() {
      return config;
    },

    onEvent(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    async close() {
      if (closed) return;
      closed = true;
      const shutdown: ApprovalVerdict = { allow: false, via: 'denied', reason: 'shutdown' };
      for (const entry of entries.values()) {
        timers.clearTimeout(entry.timer);
        for (const wake of entry.waiters) wake({ ...shutdown, requestId: entry.row.id });
        entry.waiters.clear();
      }
      // The rows stay pending; their inserts finish before the database closes.
      await Promise.all([...entries.values()].map((entry) => entry.written));
      entries.clear();
      byJoinKey.clear();
    },
  };
}
