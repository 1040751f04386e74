import { AsyncLocalStorage } from 'node:async_hooks';
import type { EventSink } from '@agentd/contracts';
import type { EvidenceLogger } from '../logger.js';

/** Receives internal events (the daemon's wrapped sink: evidence store first, then the embedder's). */
export type AuditEventSink = EventSink;

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
  logger?: EvidenceLogger;
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

/**
 * What {@link webhookAuditEvent} reads of one webhook request: the part of @agentd/webhooks-hmac's
 * `WebhookOutcome` that becomes the row (this package does not depend on the webhook handler).
 */
export interface WebhookAuditInput {
  /** `strict`, `mapped` or `none`. */
  endpoint: string;
  /** `accepted`, `duplicate`, `rejected` or `failed`. */
  outcome: string;
  /** `ok`, `duplicate` or the rejection reason. */
  reason: string;
  status: number;
  mappingId: string | undefined;
  path: string;
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
  outcome: WebhookAuditInput,
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
