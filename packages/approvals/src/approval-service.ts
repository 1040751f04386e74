import { firstIssueText, toFieldIssues } from '@agentd/errors';
import { randomUUID } from 'node:crypto';
import type { Logger } from '@agentd/contracts';
import type { Coordinator, Database } from '@agentd/storage';
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
import { type RequestRow, RequestStore, type RowDecision } from './internal/store.js';
import { approvalsMigrationSet, MIGRATION_PACKAGE } from './migrations.js';
import { Notices } from './internal/notices.js';
import { decisionAudit, pendingView, resolutionOf } from './internal/views.js';
import type {
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
  /** The database (libsql, or PostgreSQL in cluster mode); the service migrates its table on `start()`. */
  db: Database;
  /**
   * The cluster coordinator (`openCoordination` of `@agentd/storage`), started by the caller.
   * Required on PostgreSQL: decisions are compare-and-sets on the row announced on its bus, so
   * a request waiting on one instance is released by a decision made on any other. On libsql
   * it may be left out (or be the in-process one): everything stays in this process.
   */
  coordinator?: Coordinator | undefined;
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

/** How a request gets decided: the operator's or a system reason, and who. */
interface Decision {
  reason: string | undefined;
  resolvedBy: string;
  /** `operator` or a system reason: the audit row's closed `reason` token. */
  reasonKind: string;
  caller?: string | undefined;
}

const optionsSchema = z.object({
  db: z.custom<Database>((value) => typeof (value as Database | null)?.execute === 'function', {
    message: 'expected an open @agentd/storage Database',
  }),
  config: z.unknown().optional(),
  coordinator: z
    .custom<Coordinator>(
      (value) => typeof (value as Coordinator | null)?.bus?.watch === 'function',
      'expected a Coordinator from @agentd/storage',
    )
    .optional(),
  audit: z
    .custom<ApprovalAuditSink>((value) => typeof (value as ApprovalAuditSink).emit === 'function')
    .optional(),
  logger: z.unknown().optional(),
  now: z.function().optional(),
  ids: z.function().optional(),
  timers: z.unknown().optional(),
});

/** How many recent decisions are kept in memory (see `#decided`). */
const RECENT_DECISIONS = 1_000;
/** Decided rows older than this are deleted at start. */
const KEEP_DECIDED_MS = 30 * 86_400_000;
/** The bus topic of approval notices in a cluster: `{id}` of a request made or decided. */
const TOPIC = 'approvals';

const ignore = (): void => {};
const silent: Logger = { debug: ignore, info: ignore, warn: ignore, error: ignore };
const globalTimers: ApprovalTimers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

function parseSection(section: unknown): ApprovalsConfig {
  const parsed = approvalsSectionSchema.safeParse(section ?? {});
  if (!parsed.success) {
    throw new ApprovalsError('INVALID_OPTIONS', firstIssueText('approvals.', parsed.error.issues), {
      data: { issues: toFieldIssues(parsed.error.issues) },
    });
  }
  return parsed.data;
}

/** `row` decided as `approved` says, now. */
function decidedRow(row: RequestRow, approved: boolean, decision: Decision, at: number): RequestRow {
  return {
    ...row,
    status: approved ? 'approved' : 'denied',
    reason: decision.reason,
    resolvedBy: decision.resolvedBy,
    resolvedAt: at,
  };
}

function rowDecision(row: RequestRow): RowDecision {
  return {
    status: row.status === 'approved' ? 'approved' : 'denied',
    reason: row.reason,
    resolvedBy: row.resolvedBy ?? 'system',
    at: row.resolvedAt ?? 0,
  };
}

/** The closed reason token of a row decided elsewhere (`unavailable` decides no cache). */
const kindOf = (row: RequestRow): string => (row.reason === 'unavailable' ? 'unavailable' : 'operator');

/** Creates the approval service; call `start()` before `check`. */
export function createApprovalService(options: ApprovalServiceOptions): ApprovalService {
  const valid = optionsSchema.safeParse(options);
  if (!valid.success) {
    throw new ApprovalsError(
      'INVALID_OPTIONS',
      `createApprovalService: ${valid.error.issues[0]?.path.join('.')}: ${valid.error.issues[0]?.message}`,
    );
  }
  if (options.db.dialect === 'pg' && options.coordinator?.mode !== 'postgres') {
    throw new ApprovalsError(
      'INVALID_OPTIONS',
      'createApprovalService: coordinator: approvals on PostgreSQL need the cluster coordinator, so that a decision on any instance reaches the waiting one',
    );
  }
  return new Approvals(options);
}

class Approvals implements ApprovalService {
  readonly #db: Database;
  readonly #store: RequestStore;
  readonly #now: () => number;
  readonly #ids: () => string;
  readonly #timers: ApprovalTimers;
  readonly #logger: Logger;
  readonly #notices: Notices;
  readonly #approvals: DecisionCache<true>;
  readonly #denials: DecisionCache<string>;
  readonly #entries = new Map<string, Entry>();
  readonly #byJoinKey = new Map<string, Entry>();
  /** The latest decisions, so a second resolve answers what won even before its row is written. */
  readonly #decided = new Map<string, ApprovalResolution>();
  /** Decisions in flight in a cluster, so a second local resolve waits for the first's outcome. */
  readonly #deciding = new Map<string, Promise<ApprovalResolution>>();
  /** Cluster mode only: the coordinator. */
  readonly #cluster: Coordinator | undefined;
  /** Cluster mode only: requests pending on other instances, as last read. */
  #remote = new Map<string, RequestRow>();
  #unwatch: (() => void) | undefined;
  #synced = false;
  #config: ApprovalsConfig;
  #rules: CompiledRules;
  #closed = false;

  constructor(options: ApprovalServiceOptions) {
    this.#db = options.db;
    this.#cluster = options.coordinator?.mode === 'postgres' ? options.coordinator : undefined;
    this.#store = new RequestStore(options.db);
    this.#now = options.now ?? Date.now;
    this.#ids = options.ids ?? (() => `apr-${randomUUID()}`);
    this.#timers = options.timers ?? globalTimers;
    this.#logger = options.logger ?? silent;
    this.#notices = new Notices(options.audit, this.#logger);
    this.#approvals = new DecisionCache<true>(this.#now);
    this.#denials = new DecisionCache<string>(this.#now);
    this.#config = parseSection(options.config);
    this.#rules = compileRules(this.#config);
  }

  get config(): ApprovalsConfig {
    return this.#config;
  }

  async start(): Promise<void> {
    await this.#db.migrate(MIGRATION_PACKAGE, approvalsMigrationSet);
    await this.#store.pruneDecided(this.#now() - KEEP_DECIDED_MS);
    // Agent turns do not survive a restart, so a request left pending has nobody to run its tool.
    // In a cluster that holds only for requests of instances that are gone (or of an earlier run
    // of this one): a live peer's request still has its turn waiting.
    const peers = new Set(
      this.#cluster === undefined
        ? []
        : (await this.#cluster.instances())
            .map((instance) => instance.instanceId)
            .filter((id) => id !== this.#cluster?.instanceId),
    );
    for (const row of await this.#store.pending()) {
      if (row.owner !== undefined && peers.has(row.owner)) continue;
      const at = this.#now();
      const decision = { status: 'denied' as const, reason: 'restart', resolvedBy: 'system', at };
      if (!(await this.#store.decide(row.id, decision))) continue;
      const denied: RequestRow = {
        ...row,
        status: 'denied',
        reason: 'restart',
        resolvedBy: 'system',
        resolvedAt: at,
      };
      this.#notices.audit(decisionAudit(denied, 'restart'));
      this.#notices.announce({ type: 'resolved', resolution: resolutionOf(denied, at) });
      this.#logger.info(
        { requestId: row.id, toolName: row.toolName, reason: 'restart' },
        'approval request denied at start',
      );
    }
    if (this.#cluster !== undefined) {
      // Re-read on every notice and every poll: a lost notice delays a wake-up, never loses it.
      this.#unwatch = this.#cluster.bus.watch(TOPIC, () => this.#sync());
      await this.#sync();
    }
  }

  async check(call: ApprovalCheck): Promise<ApprovalVerdict> {
    if (this.#closed) return { allow: false, via: 'denied', reason: 'shutdown' };
    if (!this.#config.enabled) return { allow: true, via: 'off' };
    const { mode, rule } = this.#rules.modeOf(call.toolName);
    if (mode === 'auto') return { allow: true, via: 'auto' };
    const who = { agentId: call.agentId, sessionKey: call.sessionKey, toolName: call.toolName };
    if (mode === 'deny') {
      this.#notices.audit({
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
    if (this.#approvals.get(call.sessionKey, call.toolName)) {
      this.#notices.audit({
        classification: 'allowed',
        outcome: 'success',
        severity: 'info',
        ...who,
        action: 'cache',
        reason: 'approval_cache',
      });
      return { allow: true, via: 'approval_cache' };
    }
    const denied = this.#denials.get(call.sessionKey, call.toolName);
    if (denied !== undefined) {
      this.#notices.audit({
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
    return this.#wait(this.#request(call), call.signal);
  }

  pending(): PendingApproval[] {
    const now = this.#now();
    const remote = [...this.#remote.values()]
      .filter((row) => !this.#entries.has(row.id) && !this.#decided.has(row.id))
      .map((row) => pendingView(row, 0, now));
    return [...this.#entries.values()]
      .filter((entry) => entry.recorded)
      .map((entry) => pendingView(entry.row, entry.waiters.size, now))
      .concat(remote)
      .sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));
  }

  async resolve(id: string, approved: boolean, options: ResolveOptions = {}): Promise<ApprovalResolution> {
    const entry = this.#entries.get(id);
    if (entry) {
      return this.#decide(entry, approved, {
        reason: options.reason,
        resolvedBy: options.resolvedBy ?? 'operator',
        reasonKind: 'operator',
        caller: options.caller,
      });
    }
    const deciding = this.#deciding.get(id);
    if (deciding) return { ...(await deciding), alreadyResolved: true };
    // Decided moments ago: its row may not be updated yet, so memory answers first.
    const recent = this.#decided.get(id);
    if (recent) return { ...recent, alreadyResolved: true };
    if (this.#cluster !== undefined) {
      return this.#decideElsewhere(id, approved, {
        reason: options.reason,
        resolvedBy: options.resolvedBy ?? 'operator',
        reasonKind: 'operator',
        caller: options.caller,
      });
    }
    const row = await this.#store.get(id);
    // A pending row with no request in memory is none this service made (start() decides every
    // earlier one), so it is no request it can resolve.
    if (!row || row.status === 'pending') {
      throw new ApprovalsError('REQUEST_NOT_FOUND', `Approval request not found: ${id}`, { data: { id } });
    }
    return { ...resolutionOf(row, this.#now()), alreadyResolved: true };
  }

  async resolveAll(
    approved: boolean,
    options: ResolveOptions & { sessionKey?: string | undefined } = {},
  ): Promise<{ resolved: number; requestIds: string[] }> {
    const chosen = [...this.#entries.values()].filter(
      (entry) => options.sessionKey === undefined || entry.row.sessionKey === options.sessionKey,
    );
    const decision: Decision = {
      reason: options.reason,
      resolvedBy: options.resolvedBy ?? 'operator',
      reasonKind: 'operator',
      caller: options.caller,
    };
    const decisions: Array<Promise<ApprovalResolution | undefined>> = chosen.map((entry) =>
      this.#decide(entry, approved, decision),
    );
    if (this.#cluster !== undefined) {
      // Requests waiting on other instances are decided here too, each by its compare-and-set.
      for (const row of await this.#store.pending()) {
        if (this.#entries.has(row.id) || chosen.some((entry) => entry.row.id === row.id)) continue;
        if (options.sessionKey !== undefined && row.sessionKey !== options.sessionKey) continue;
        decisions.push(
          this.#decideElsewhere(row.id, approved, decision).then((resolution) =>
            resolution.alreadyResolved ? undefined : resolution,
          ),
        );
      }
    }
    const resolutions = (await Promise.all(decisions)).filter(
      (resolution): resolution is ApprovalResolution => resolution !== undefined,
    );
    return { resolved: resolutions.length, requestIds: resolutions.map((resolution) => resolution.id) };
  }

  clearDenialCache(): number {
    const cleared = this.#denials.clear();
    this.#notices.audit({
      classification: 'allowed',
      outcome: 'success',
      severity: 'low',
      action: 'clear_denial_cache',
      cleared,
    });
    return cleared;
  }

  clearSession(sessionKey: string): number {
    return this.#approvals.clearSession(sessionKey) + this.#denials.clearSession(sessionKey);
  }

  applyConfig(section: ApprovalsConfigInput): void {
    this.#config = parseSection(section);
    this.#rules = compileRules(this.#config);
  }

  onEvent(listener: (event: ApprovalEvent) => void): () => void {
    return this.#notices.subscribe(listener);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#unwatch?.();
    for (const entry of this.#entries.values()) {
      this.#timers.clearTimeout(entry.timer);
      for (const wake of entry.waiters)
        wake({ allow: false, via: 'denied', reason: 'shutdown', requestId: entry.row.id });
      entry.waiters.clear();
    }
    // The rows stay pending; their inserts finish before the database closes.
    await Promise.all([...this.#entries.values()].map((entry) => entry.written));
    this.#entries.clear();
    this.#byJoinKey.clear();
  }

  /** The pending request identical to `call`, or a new one (timer armed, row being written). */
  #request(call: ApprovalCheck): Entry {
    const fingerprint = argsFingerprint(call.input);
    const joinKey = [call.sessionKey, call.agentId, call.toolName, fingerprint].join('\u0000');
    const joined = this.#byJoinKey.get(joinKey);
    if (joined) return joined;
    const createdAt = this.#now();
    const { timeoutMs } = this.#config;
    const row: RequestRow = {
      id: this.#ids(),
      sessionKey: call.sessionKey,
      agentId: call.agentId,
      toolName: call.toolName,
      fingerprint,
      argsDigest: digestArgs(call.input),
      status: 'pending',
      reason: undefined,
      resolvedBy: undefined,
      createdAt,
      expiresAt: createdAt + timeoutMs,
      resolvedAt: undefined,
      owner: this.#cluster?.instanceId,
    };
    const entry: Entry = {
      row,
      joinKey,
      waiters: new Set(),
      timer: undefined,
      written: Promise.resolve(false),
      recorded: false,
    };
    this.#entries.set(row.id, entry);
    this.#byJoinKey.set(joinKey, entry);
    entry.timer = this.#timers.setTimeout(() => {
      if (this.#entries.get(row.id) === entry) {
        void this.#decide(entry, false, { reason: 'timeout', resolvedBy: 'system', reasonKind: 'timeout' });
      }
    }, timeoutMs);
    entry.written = this.#store.insert(row).then(
      () => {
        // Other instances list it on the notice (or their next poll).
        this.#cluster?.bus.publish(TOPIC, { id: row.id }).catch(() => undefined);
        return this.#recorded(entry);
      },
      (err: unknown) => this.#unrecorded(entry, err),
    );
    return entry;
  }

  /** The row is written: the request is listed, audited (`escalated`) and announced. */
  #recorded(entry: Entry): true {
    entry.recorded = true;
    const { row } = entry;
    if (this.#entries.get(row.id) === entry) {
      this.#notices.audit({
        classification: 'escalated',
        outcome: 'success',
        severity: 'low',
        agentId: row.agentId,
        sessionKey: row.sessionKey,
        action: 'request',
        requestId: row.id,
        toolName: row.toolName,
      });
      this.#notices.announce({
        type: 'requested',
        request: pendingView(row, entry.waiters.size, this.#now()),
      });
    }
    return true;
  }

  /** The row could not be written: nothing runs without a recorded request (fail closed). */
  #unrecorded(entry: Entry, err: unknown): false {
    this.#logger.error(
      { err, hint: 'check the database; the tool call was refused (fail closed)', errorKind: 'resource' },
      'approval request not recorded',
    );
    if (this.#entries.get(entry.row.id) === entry) {
      void this.#decide(entry, false, {
        reason: 'unavailable',
        resolvedBy: 'system',
        reasonKind: 'unavailable',
      });
    }
    return false;
  }

  /** Waits for the request's decision, or until `signal` says the turn ended. */
  #wait(entry: Entry, signal: AbortSignal | undefined): Promise<ApprovalVerdict> {
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
      entry.waiters.add(wake);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Decides a request: off the pending maps at once (so a second decision finds nothing), then
   * the caches, the waiting calls, the row, the audit and the announcement. In a cluster the row
   * is written first, as a compare-and-set: when another instance decided first, its decision
   * is the one applied and answered (`alreadyResolved`).
   */
  async #decide(entry: Entry, approved: boolean, decision: Decision): Promise<ApprovalResolution> {
    this.#entries.delete(entry.row.id);
    this.#byJoinKey.delete(entry.joinKey);
    this.#timers.clearTimeout(entry.timer);
    if (this.#cluster !== undefined) {
      return this.#tracked(entry.row.id, this.#decideShared(entry, approved, decision));
    }
    const row = decidedRow(entry.row, approved, decision, this.#now());
    const resolution = this.#settle(entry, row, decision.reasonKind);
    if (await entry.written) {
      await this.#store
        .decide(row.id, rowDecision(row))
        .catch((err: unknown) => this.#unwritten(row.id, err));
    }
    this.#notices.audit(decisionAudit(row, decision.reasonKind, decision.caller));
    this.#notices.announce({ type: 'resolved', resolution });
    return resolution;
  }

  async #decideShared(entry: Entry, approved: boolean, decision: Decision): Promise<ApprovalResolution> {
    const mine = decidedRow(entry.row, approved, decision, this.#now());
    if (await entry.written) {
      const won = await this.#commit(mine).catch((err: unknown) => {
        this.#unwritten(mine.id, err);
        return mine;
      });
      if (won === undefined) {
        const current = await this.#store.get(mine.id).catch(() => undefined);
        if (current !== undefined && current.status !== 'pending') {
          const resolution = this.#settle(entry, current, kindOf(current));
          this.#notices.announce({ type: 'resolved', resolution });
          return { ...resolution, alreadyResolved: true };
        }
      }
    }
    const resolution = this.#settle(entry, mine, decision.reasonKind);
    this.#notices.audit(decisionAudit(mine, decision.reasonKind, decision.caller));
    this.#notices.announce({ type: 'resolved', resolution });
    return resolution;
  }

  /** Cluster mode: decides a request another instance waits on (or one nobody waits on any more). */
  #decideElsewhere(id: string, approved: boolean, decision: Decision): Promise<ApprovalResolution> {
    const at = this.#now();
    const attempt = async (): Promise<ApprovalResolution> => {
      const current = await this.#store.get(id);
      if (current === undefined) {
        throw new ApprovalsError('REQUEST_NOT_FOUND', `Approval request not found: ${id}`, { data: { id } });
      }
      const won =
        current.status === 'pending'
          ? await this.#commit(decidedRow(current, approved, decision, at))
          : undefined;
      if (won !== undefined) {
        const resolution = this.#settle(undefined, won, decision.reasonKind);
        this.#notices.audit(decisionAudit(won, decision.reasonKind, decision.caller));
        this.#notices.announce({ type: 'resolved', resolution });
        return resolution;
      }
      const decided = (await this.#store.get(id)) ?? current;
      return { ...resolutionOf(decided, this.#now()), alreadyResolved: true };
    };
    return this.#tracked(id, attempt());
  }

  /** The compare-and-set of a decision and its bus notice, delivered when the transaction commits. */
  #commit(row: RequestRow): Promise<RequestRow | undefined> {
    const cluster = this.#cluster;
    return this.#db.transaction(async (tx) => {
      const won = await this.#store.decideReturning(tx, row.id, rowDecision(row));
      if (won !== undefined) await cluster?.bus.publish(TOPIC, { id: row.id }, tx);
      return won;
    });
  }

  /** Remembers a decision in flight, so a concurrent resolve of the same id answers its outcome. */
  #tracked(id: string, decision: Promise<ApprovalResolution>): Promise<ApprovalResolution> {
    this.#deciding.set(id, decision);
    decision.then(
      () => this.#deciding.delete(id),
      () => this.#deciding.delete(id),
    );
    return decision;
  }

  /** Applies a decided row in this process: caches, the waiting calls, the recent decisions. */
  #settle(entry: Entry | undefined, row: RequestRow, reasonKind: string): ApprovalResolution {
    this.#cacheDecision(row, reasonKind);
    if (entry !== undefined) {
      const verdict: ApprovalVerdict =
        row.status === 'approved'
          ? { allow: true, via: 'approved', requestId: row.id }
          : { allow: false, via: 'denied', reason: row.reason ?? 'denied', requestId: row.id };
      for (const wake of entry.waiters) wake(verdict);
      entry.waiters.clear();
    }
    const resolution = resolutionOf(row, this.#now());
    this.#decided.set(row.id, resolution);
    if (this.#decided.size > RECENT_DECISIONS)
      this.#decided.delete(this.#decided.keys().next().value as string);
    this.#remote.delete(row.id);
    return resolution;
  }

  /**
   * Cluster mode: re-reads the pending requests and those this instance waits on. A request
   * decided elsewhere releases its waiting calls here; the others' pending ones are listed.
   */
  async #sync(): Promise<void> {
    if (this.#closed) return;
    const local = [...this.#entries.values()].filter((entry) => entry.recorded).map((entry) => entry.row.id);
    const remote = new Map<string, RequestRow>();
    for (const row of await this.#store.pendingOr(local)) {
      const entry = this.#entries.get(row.id);
      if (entry === undefined) {
        if (row.status === 'pending') remote.set(row.id, row);
        continue;
      }
      if (row.status === 'pending') continue;
      this.#entries.delete(row.id);
      this.#byJoinKey.delete(entry.joinKey);
      this.#timers.clearTimeout(entry.timer);
      this.#notices.announce({ type: 'resolved', resolution: this.#settle(entry, row, kindOf(row)) });
    }
    // Requests made on other instances are announced here too (not those found at start).
    if (this.#synced) {
      const now = this.#now();
      for (const [id, row] of remote) {
        if (!this.#remote.has(id))
          this.#notices.announce({ type: 'requested', request: pendingView(row, 0, now) });
      }
    }
    this.#synced = true;
    this.#remote = remote;
  }

  #unwritten(requestId: string, err: unknown): void {
    this.#logger.error(
      {
        err,
        requestId,
        hint: 'check the database; the decision was applied in memory',
        errorKind: 'resource',
      },
      'approval decision not recorded',
    );
  }

  /** An approval or denial answers the same session and tool for a while (`unavailable` decides nothing). */
  #cacheDecision(row: RequestRow, reasonKind: string): void {
    const { sessionKey, toolName } = row;
    if (row.status === 'approved') {
      this.#approvals.set(sessionKey, toolName, true, this.#config.approvalCacheMs);
      this.#denials.delete(sessionKey, toolName);
    } else if (reasonKind !== 'unavailable') {
      this.#denials.set(sessionKey, toolName, row.reason ?? 'denied', this.#config.denialCacheMs);
      this.#approvals.delete(sessionKey, toolName);
    }
  }
}
