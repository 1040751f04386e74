import { AsyncLocalStorage } from 'node:async_hooks';
import { join } from 'node:path';
import type { ConfigChangeEvent, ConfigWriteResult } from '@agentd/config-store';
import { ConfigStoreError } from '@agentd/config-store';
import { type AgentdLogger, createRotatingFileStream, type RotatingFileStream } from '@agentd/logging';
import type { WebhookOutcome } from '@agentd/webhooks-hmac';

/** Receives internal events (the daemon's wrapped sink: evidence store first, then the embedder's). */
export interface AuditEventSink {
  emit(event: string, payload: Record<string, unknown>): void;
}

/** What an audit row is about (the closed `kind` enum of `obs.audit.query`). */
export type AuditKind =
  | 'auth'
  | 'scope'
  | 'capability'
  | 'approval'
  | 'secret'
  | 'config'
  | 'webhook'
  | 'lease';
/** The decision taken. */
export type AuditClassification = 'allowed' | 'denied' | 'escalated';
/** Whether the decided action then happened. */
export type AuditOutcome = 'success' | 'failure';
/** How much an operator should care. */
export type AuditSeverity = 'info' | 'low' | 'medium' | 'high' | 'critical';

/**
 * One security decision. Besides the enum fields it carries only counts, ids and closed
 * tokens (they become the row's `refs`). Key names avoid `token`/`secret`: the evidence
 * store drops credential-named keys, so the caller's token id travels as `caller`.
 */
export interface AuditEvent {
  kind: AuditKind;
  classification: AuditClassification;
  outcome: AuditOutcome;
  severity: AuditSeverity;
  agentId?: string;
  sessionKey?: string;
  [ref: string]: unknown;
}

/** Emits `audit:event`; never throws into the producer. */
export interface SecurityAudit {
  emit(event: AuditEvent): void;
}

/** Creates the `audit:event` producer over the daemon's event sink. */
export function createSecurityAudit(options: {
  events: AuditEventSink;
  logger?: AgentdLogger;
}): SecurityAudit {
  return {
    emit(event) {
      try {
        options.events.emit('audit:event', event);
      } catch (error) {
        // A sink that throws must not turn an allowed request into a failed one.
        options.logger?.warn(
          { err: error, hint: 'an audit event sink threw; the decision stands', errorKind: 'internal' },
          'audit event not delivered',
        );
      }
    },
  };
}

/** A producer for tests and embedders that do not audit. */
export const noopSecurityAudit: SecurityAudit = { emit: () => undefined };

/** Who is acting, bound around admin RPC calls, reloads and the first-start token. */
export interface AuditActor {
  /** The RPC method, or `reload` / `bootstrap`. */
  method: string;
  /** Id of the caller's token (never the secret); absent for a signal-driven reload. */
  tokenId?: string | undefined;
  /** Set while a producer records the change itself, so the change listener does not repeat it. */
  recorded?: boolean;
}

const actors = new AsyncLocalStorage<AuditActor>();

/** Runs `fn` with `actor` as the one a config change made inside it is attributed to. */
export function runAsActor<R>(actor: AuditActor, fn: () => R): R {
  return actors.run(actor, fn);
}

/** The actor bound by the innermost {@link runAsActor}, if any. */
export function currentActor(): AuditActor | undefined {
  return actors.getStore();
}

/** The token scopes this daemon knows. */
type Scope = 'rpc' | 'admin' | '*';

/**
 * Severity of a token being created or revoked: `*` is `high` (every method, including
 * token management), `admin` is `medium`, `rpc` only is `low`.
 */
export function tokenSeverity(scopes: readonly string[]): AuditSeverity {
  if (scopes.includes('*')) return 'high';
  if (scopes.includes('admin')) return 'medium';
  return 'low';
}

/** How a scope is written into an audit row. */
export type ScopeToken = 'rpc' | 'admin' | 'all';

/**
 * Scopes as closed tokens for a row: `*` becomes `all`, because the evidence store keeps only
 * id-like strings; anything unexpected is dropped, never copied.
 */
export function scopeTokens(scopes: readonly string[]): ScopeToken[] {
  const out: ScopeToken[] = [];
  for (const scope of scopes as readonly (Scope | string)[]) {
    if (scope === '*') out.push('all');
    else if (scope === 'rpc' || scope === 'admin') out.push(scope);
  }
  return out;
}

/** Sections whose change touches credentials, listeners or where data lives. */
export const SENSITIVE_SECTIONS: ReadonlySet<string> = new Set([
  'gateway',
  'webhooks',
  'providers',
  'storage',
]);

/** Why a config write did not happen (closed tokens). */
export type ConfigFailureReason =
  | 'invalid'
  | 'section_not_found'
  | 'commit_not_found'
  | 'write_policy'
  | 'io_failed'
  | 'error';

/** The closed reason token of a failed config write or reload. */
export function configFailureReason(error: unknown): ConfigFailureReason {
  if (error instanceof ConfigStoreError) {
    switch (error.code) {
      case 'VALIDATION':
      case 'CONFIG_INVALID':
      case 'SECRET_MISSING':
        return 'invalid';
      case 'SECTION_NOT_FOUND':
        return 'section_not_found';
      case 'NOT_FOUND':
        return 'commit_not_found';
      case 'IO_FAILED':
      case 'GIT_FAILED':
        return 'io_failed';
      default:
        return 'error';
    }
  }
  return 'error';
}

/** One line of `logs/config-audit.jsonl`: who changed which sections into which commit. Never a value. */
export interface ConfigAuditEntry {
  /** `config.patch`, `config.apply`, `config.set`, `config.rollback`, `reload`, `bootstrap`, or the RPC method whose work persisted config (`tokens.create`, `agents.update`, …). */
  method: string;
  /** Names of the sections that changed (for a failure: the known sections the write named). */
  sections: string[];
  /** Commit holding the config after the change; absent on failure. */
  sha?: string | undefined;
  /** Id of the caller's token; absent for a signal-driven reload and the first-start token. */
  tokenId?: string | undefined;
  outcome: AuditOutcome;
  /** Only on failure. */
  reason?: ConfigFailureReason | undefined;
}

/** The config-audit file's roll size, from the contract's Limits. */
export const CONFIG_AUDIT_MAX_BYTES = 10 * 1024 * 1024;

/** The config-audit stream's file name inside the daemon's log directory. */
export const CONFIG_AUDIT_FILE = 'config-audit.jsonl';

/** Options of {@link createConfigAudit}. */
export interface ConfigAuditOptions {
  /** The daemon's log directory (`<data dir>/logs` by default). */
  logDir: string;
  /** Size at which `config-audit.jsonl` rolls. @default 10485760 (10 MB, the contract's cap) */
  maxSizeBytes?: number | undefined;
  /** Rotated copies kept (`observability.logRotation.maxFiles`). @default 5 */
  maxFiles?: number | undefined;
  /** Gzip rotated copies (`observability.logRotation.compressAged`). @default true */
  compress?: boolean | undefined;
  /** Producer of the matching `audit:event` (kind `config`). */
  audit: SecurityAudit;
  /** Sections the config knows; other names a failed write mentions are not recorded. */
  sections: readonly string[];
  /** Module logger for write failures of the file. */
  logger?: AgentdLogger | undefined;
  /** Clock. @default Date.now */
  now?: (() => number) | undefined;
}

/** The config-audit stream: the file and the `audit:event` of every config change. */
export interface ConfigAudit {
  /** Path of the live file. */
  readonly filePath: string;
  /** Writes one line and emits its `audit:event` (except for the first-start token, see decisions.md). */
  record(entry: ConfigAuditEntry): void;
  /**
   * Runs one config write of an RPC method and records it: success with the result's
   * sections and sha, or failure with a closed reason; rethrows the failure.
   */
  track<T extends ConfigWriteResult>(
    origin: { method: string; tokenId: string; sections: readonly string[] },
    write: () => Promise<T>,
  ): Promise<T>;
  /** Reloads the config from disk as actor `reload`; a failed reload is recorded and rethrown. */
  reload(load: () => Promise<void>): Promise<void>;
  /** For `configStore.onChange`: records a committed change no producer recorded itself. */
  onChange(next: unknown, change: ConfigChangeEvent): void;
  /** Forces the file to disk, finishes pending rotations and closes it. Idempotent. */
  close(): Promise<void>;
}

/**
 * Opens `<logDir>/config-audit.jsonl` (rotating at 10 MB by default, copies shifted to
 * `.1[.gz]` … for the start-up sweep) and returns the recorder of config changes.
 * @throws the logging package's `FILE_OPEN_FAILED` when the log directory is not writable.
 */
export function createConfigAudit(options: ConfigAuditOptions): ConfigAudit {
  const now = options.now ?? Date.now;
  const known = new Set(options.sections);
  const stream: RotatingFileStream = createRotatingFileStream({
    filePath: join(options.logDir, CONFIG_AUDIT_FILE),
    maxSizeBytes: options.maxSizeBytes ?? CONFIG_AUDIT_MAX_BYTES,
    maxFiles: options.maxFiles ?? 5,
    compress: options.compress ?? true,
  });
  stream.on('error', (error: unknown) => {
    options.logger?.warn(
      { err: error, hint: 'check free space and permissions of the logs directory', errorKind: 'resource' },
      'config-audit file write failed',
    );
  });
  let closing: Promise<void> | undefined;

  const record = (entry: ConfigAuditEntry): void => {
    const sections = entry.sections.filter((name) => known.has(name));
    const line = {
      ts: new Date(now()).toISOString(),
      method: entry.method,
      sections,
      ...(entry.sha ? { sha: entry.sha } : {}),
      ...(entry.tokenId ? { tokenId: entry.tokenId } : {}),
      outcome: entry.outcome,
      ...(entry.reason ? { reason: entry.reason } : {}),
    };
    if (stream.write(`${JSON.stringify(line)}\n`)) {
      try {
        // Config changes are rare and each is a git commit already; the audit line is made durable too.
        stream.flushSync();
      } catch (error) {
        options.logger?.warn(
          { err: error, hint: 'check the disk holding the logs directory', errorKind: 'resource' },
          'config-audit file could not be synced',
        );
      }
    }
    // The first-start admin token is written before any request: the audit table records decisions
    // on requests, so a fresh daemon starts with an empty audit (the file still has the line).
    if (entry.method === 'bootstrap') return;
    options.audit.emit({
      kind: 'config',
      classification: 'allowed',
      outcome: entry.outcome,
      severity: configSeverity(sections, entry),
      method: entry.method,
      sections,
      ...(entry.sha ? { sha: entry.sha } : {}),
      ...(entry.tokenId ? { caller: entry.tokenId } : {}),
      ...(entry.reason ? { reason: entry.reason } : {}),
    });
  };

  return {
    filePath: stream.filePath,
    record,
    async track(origin, write) {
      let result: ConfigWriteResult;
      let returned: ReturnType<typeof write>;
      try {
        returned = runAsActor({ method: origin.method, tokenId: origin.tokenId, recorded: true }, write);
        result = await returned;
      } catch (error) {
        record({
          method: origin.method,
          sections: [...origin.sections],
          tokenId: origin.tokenId,
          outcome: 'failure',
          reason: configFailureReason(error),
        });
        throw error;
      }
      record({
        method: origin.method,
        sections: result.changedSections,
        sha: result.sha,
        tokenId: origin.tokenId,
        outcome: 'success',
      });
      return returned;
    },
    async reload(load) {
      // A reload asked for over RPC (gateway.restart) keeps its caller; a SIGHUP has none.
      const tokenId = currentActor()?.tokenId;
      try {
        await runAsActor({ method: 'reload', tokenId }, load);
      } catch (error) {
        record({
          method: 'reload',
          sections: [],
          tokenId,
          outcome: 'failure',
          reason: configFailureReason(error),
        });
        throw error;
      }
    },
    onChange(_next, change) {
      const actor = currentActor();
      if (actor?.recorded) return;
      record({
        method: actor?.method ?? 'internal',
        sections: change.changedSections,
        sha: change.sha,
        tokenId: actor?.tokenId,
        outcome: 'success',
      });
    },
    close() {
      closing ??= (async () => {
        try {
          stream.flushSync();
        } catch {
          // Nothing more can be done at shutdown; close() below still releases the file.
        }
        await stream.close();
      })();
      return closing;
    },
  };
}

/**
 * Severity of a config change: `medium` when a sensitive section (gateway, webhooks,
 * providers, storage) changed or a write was refused by the write policy (a plaintext
 * token over RPC), `low` otherwise.
 */
function configSeverity(sections: readonly string[], entry: ConfigAuditEntry): AuditSeverity {
  if (entry.reason === 'write_policy') return 'medium';
  return sections.some((name) => SENSITIVE_SECTIONS.has(name)) ? 'medium' : 'low';
}

/** Webhook rejections that are security decisions, with their severity. */
const WEBHOOK_DENIALS: ReadonlyMap<string, AuditSeverity> = new Map<string, AuditSeverity>([
  ['no_secret', 'low'],
  ['signature_missing', 'low'],
  ['timestamp_missing', 'low'],
  ['timestamp_malformed', 'low'],
  ['algorithm_mismatch', 'medium'],
  ['length_mismatch', 'medium'],
  ['signature_mismatch', 'medium'],
  ['timestamp_stale', 'medium'],
  ['timestamp_future', 'medium'],
]);

/**
 * The audit event of one webhook request, or undefined when it is no security decision worth a
 * row: bad JSON, no mapping, a body too large (counted, not audited), and a verified request
 * accepted (routine, as a successful bearer authentication is). `verified` says whether the
 * handler checks signatures on this endpoint; an unsigned acceptance is audited only when
 * `firstUnsigned` says it is the first on its path since the webhooks were configured, so an
 * open endpoint shows up once instead of once per request.
 */
export function webhookAuditEvent(
  outcome: WebhookOutcome,
  verified: boolean,
  firstUnsigned: (path: string) => boolean = () => true,
): AuditEvent | undefined {
  const refs = {
    endpoint: outcome.endpoint,
    path: outcome.path,
    ...(outcome.mappingId ? { mapping: outcome.mappingId } : {}),
    status: outcome.status,
  };
  if (outcome.outcome === 'accepted' || outcome.outcome === 'duplicate') {
    if (verified || !firstUnsigned(outcome.path)) return undefined;
    // Accepting unsigned requests (a mapped path while no webhooks.token is set) is worth a look.
    return {
      kind: 'webhook',
      classification: 'allowed',
      outcome: 'success',
      severity: 'low',
      reason: 'unsigned',
      ...refs,
    };
  }
  const severity = WEBHOOK_DENIALS.get(outcome.reason);
  if (severity === undefined) return undefined;
  return {
    kind: 'webhook',
    classification: 'denied',
    outcome: 'failure',
    severity,
    reason: outcome.reason,
    ...refs,
  };
}
