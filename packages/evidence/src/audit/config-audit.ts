import { join } from 'node:path';
import { createRotatingFileStream, type RotatingFileStream } from '@agentd/logging';
import {
  type AuditOutcome,
  type AuditSeverity,
  currentActor,
  runAsActor,
  type SecurityAudit,
} from './security-audit.js';
import type { EvidenceLogger } from '../logger.js';

/**
 * What a committed config write reports (the part of @agentd/config-store's `ConfigWriteResult`
 * and `ConfigChangeEvent` the audit records).
 */
export interface ConfigCommit {
  /** Commit holding the config after the change. */
  sha: string;
  /** Sections whose value changed. */
  changedSections: string[];
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

/**
 * The closed reason token of a failed config write or reload. A `ConfigStoreError` of
 * @agentd/config-store is recognised by its name and `code` (this package does not depend on
 * the config store); any other error is `error`.
 */
export function configFailureReason(error: unknown): ConfigFailureReason {
  if (error instanceof Error && error.name === 'ConfigStoreError') {
    switch ((error as Error & { code?: unknown }).code) {
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
  logger?: EvidenceLogger | undefined;
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
  track<T extends ConfigCommit>(
    origin: { method: string; tokenId: string; sections: readonly string[] },
    write: () => Promise<T>,
  ): Promise<T>;
  /** Reloads the config from disk as actor `reload`; a failed reload is recorded and rethrown. */
  reload(load: () => Promise<void>): Promise<void>;
  /** For `configStore.onChange`: records a committed change no producer recorded itself. */
  onChange(next: unknown, change: ConfigCommit): void;
  /**
   * Applies new rotation settings in place (config hot-reload): `maxFiles` and `compress` at
   * the next roll; a new `logDir` moves the live file there between two lines.
   * @throws the logging package's `FILE_OPEN_FAILED` when the new directory is not writable
   * (the file stays where it was).
   */
  applyOptions(options: { logDir?: string; maxFiles?: number; compress?: boolean }): void;
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
    get filePath() {
      return stream.filePath;
    },
    record,
    applyOptions({ logDir, maxFiles, compress }) {
      stream.applyOptions({
        ...(logDir === undefined ? {} : { filePath: join(logDir, CONFIG_AUDIT_FILE) }),
        ...(maxFiles === undefined ? {} : { maxFiles }),
        ...(compress === undefined ? {} : { compress }),
      });
    },
    async track(origin, write) {
      let result: ConfigCommit;
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
