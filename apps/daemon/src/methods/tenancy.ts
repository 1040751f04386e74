import { allowsSession, bindingOf } from '@agentd/auth-scopes';
import { noopSecurityAudit, type SecurityAudit } from '@agentd/evidence/audit';
import { type AnyMethod, type MethodContext, RpcError } from '@agentd/rpc-core';

/**
 * The reach of tenant-bound tokens (`tokens.create {tenantId}`): such a caller uses and lists
 * only sessions of its tenant (and session-key prefixes, when bound to them); unbound tokens
 * reach every session. Another tenant's session, memory, cron job or graph run is answered
 * `-32004 <Kind> not found: <id>`, as if it did not exist; a namespace every tenant shares is
 * refused `-32603` like a missing scope. Each refusal is audited.
 */
export interface TenantGuard {
  /** `sessionKey` when the caller may use it; `-32004` (audited) otherwise. */
  session(context: MethodContext, sessionKey: string): string;
  /** The key prefix a listing is narrowed to (`<tenant>:`); `undefined` for an unbound caller. */
  prefix(context: MethodContext): string | undefined;
  /** Whether a listed session may be shown to the caller. */
  shows(context: MethodContext, sessionKey: string): boolean;
  /** The memory tenant a bound caller is limited to; another one it names is not found. */
  memoryTenant(context: MethodContext, named: string | undefined): string | undefined;
  /** Refuses a tenant-bound caller an answer that spans every tenant (`-32603`). */
  unboundOnly(context: MethodContext): void;
  /**
   * Answers a tenant-bound caller `-32004 <kind> not found: <id>` for a thing (a memory entry,
   * a cron job, a graph run) owned by another tenant or by none.
   */
  owned(context: MethodContext, owner: string | undefined, kind: string, id: string): void;
}

/** Creates the guard; refusals become `audit:event` rows of kind `scope`, reason `tenant`. */
export function tenantGuard(audit: SecurityAudit = noopSecurityAudit): TenantGuard {
  const audited = (context: MethodContext, refs: Record<string, unknown>): void =>
    audit.emit({
      kind: 'scope',
      classification: 'denied',
      outcome: 'failure',
      severity: 'medium',
      caller: context.identity.tokenId,
      method: context.method,
      reason: 'tenant',
      ...refs,
    });
  /** Another tenant's thing: answered as if absent. */
  const absent = (context: MethodContext, kind: string, id: string, refs: Record<string, unknown>): never => {
    audited(context, refs);
    throw RpcError.notFound(kind, id);
  };
  return {
    session(context, sessionKey) {
      if (!allowsSession(bindingOf(context.identity), sessionKey)) {
        absent(context, 'Session', sessionKey, { sessionKey });
      }
      return sessionKey;
    },
    prefix: (context) => (context.identity.tenant === undefined ? undefined : `${context.identity.tenant}:`),
    shows: (context, sessionKey) => allowsSession(bindingOf(context.identity), sessionKey),
    memoryTenant(context, named) {
      const tenant = context.identity.tenant;
      if (tenant === undefined) return named;
      if (named !== undefined && named !== tenant) {
        absent(context, 'Memory tenant', named, { memoryTenant: named });
      }
      return tenant;
    },
    unboundOnly(context) {
      const tenant = context.identity.tenant;
      if (tenant === undefined) return;
      audited(context, {});
      throw new RpcError(-32603, `Insufficient scope: this token is bound to tenant '${tenant}'`);
    },
    owned(context, owner, kind, id) {
      const tenant = context.identity.tenant;
      if (tenant !== undefined && owner !== tenant)
        absent(context, kind, id, { resource: kind, resourceId: id });
    },
  };
}

/**
 * The methods of a namespace whose state every tenant shares (the one browser, graph runs,
 * the heartbeat, diagnostics), refused to tenant-bound callers: each handler first calls
 * `unboundOnly`. A synchronous handler stays synchronous.
 */
export function unboundOnly(guard: TenantGuard, methods: AnyMethod[]): AnyMethod[] {
  return methods.map((method) => ({
    ...method,
    handler: (params: unknown, context: MethodContext) => {
      guard.unboundOnly(context);
      return method.handler(params, context);
    },
  }));
}

/**
 * Names a caller gives to things every caller names (cron jobs, saved graphs): a tenant-bound
 * caller's live under `<tenant>/`, so two tenants may use one name and a "name taken" answer
 * reveals nothing of another tenant's; an unbound caller (the operator) uses and sees the
 * qualified names.
 */
export function tenantNames(context: MethodContext): {
  /** The stored name of a name the caller gives. */
  qualify(name: string): string;
  /** The name the caller sees for a stored name. */
  show(name: string): string;
} {
  const tenant = context.identity.tenant;
  if (tenant === undefined) return { qualify: (name) => name, show: (name) => name };
  const prefix = `${tenant}/`;
  return {
    qualify: (name) => prefix + name,
    show: (name) => (name.startsWith(prefix) ? name.slice(prefix.length) : name),
  };
}
