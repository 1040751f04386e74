import type { ToolGate } from '@agentd/agent-runtime';
import { allowsSession, bindingOf } from '@agentd/auth-scopes';
import { noopSecurityAudit, type SecurityAudit } from '@agentd/evidence/audit';
import { type AnyMethod, type MethodContext, RpcError } from '@agentd/rpc-core';

/**
 * The reach of tenant-bound tokens over sessions (`tokens.create {tenant}`): such a caller
 * uses and lists only sessions of its tenant (and session-key prefixes, when bound to them);
 * unbound tokens reach every session. A refusal is `-32603` like a missing scope, audited.
 */
export interface TenantGuard {
  /** `sessionKey` when the caller may use it; throws (audited) otherwise. */
  session(context: MethodContext, sessionKey: string): string;
  /** The key prefix a listing is narrowed to (`<tenant>:`); `undefined` for an unbound caller. */
  prefix(context: MethodContext): string | undefined;
  /** Whether a listed session may be shown to the caller. */
  shows(context: MethodContext, sessionKey: string): boolean;
  /** The memory tenant a bound caller is limited to; refuses another one it names. */
  memoryTenant(context: MethodContext, named: string | undefined): string | undefined;
  /** Refuses a tenant-bound caller an answer that spans every tenant. */
  unboundOnly(context: MethodContext): void;
  /** Refuses a tenant-bound caller a thing (a cron job) owned by another tenant or by none. */
  owned(context: MethodContext, owner: string | undefined, refs: Record<string, unknown>): void;
}

/** Creates the guard; refusals become `audit:event` rows of kind `scope`. */
export function tenantGuard(audit: SecurityAudit = noopSecurityAudit): TenantGuard {
  const refuse = (context: MethodContext, tenant: string, refs: Record<string, unknown>): never => {
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
    throw new RpcError(-32603, `Insufficient scope: this token is bound to tenant '${tenant}'`);
  };
  return {
    session(context, sessionKey) {
      const binding = bindingOf(context.identity);
      if (!allowsSession(binding, sessionKey)) refuse(context, binding?.tenant ?? '', { sessionKey });
      return sessionKey;
    },
    prefix: (context) => (context.identity.tenant === undefined ? undefined : `${context.identity.tenant}:`),
    shows: (context, sessionKey) => allowsSession(bindingOf(context.identity), sessionKey),
    memoryTenant(context, named) {
      const tenant = context.identity.tenant;
      if (tenant === undefined) return named;
      if (named !== undefined && named !== tenant) refuse(context, tenant, { memoryTenant: named });
      return tenant;
    },
    unboundOnly(context) {
      const tenant = context.identity.tenant;
      if (tenant !== undefined) refuse(context, tenant, {});
    },
    owned(context, owner, refs) {
      const tenant = context.identity.tenant;
      if (tenant !== undefined && owner !== tenant) refuse(context, tenant, refs);
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
/**
 * The agent tools whose state every tenant shares (the one browser, an agent's workspace and
 * terminal drives), refused in the turns of a tenant-bound caller or a tenant's cron job: a turn
 * with a memory tenant. (The graph tools author as the turn's tenant, so they stay within it.)
 */
export function sharedToolsGate(
  prefixes: readonly string[] = ['browser_', 'workspace_', 'terminal_'],
): ToolGate {
  return {
    name: 'tenant-shared-tools',
    before(call) {
      if (call.memoryTenant === undefined || !prefixes.some((prefix) => call.toolName.startsWith(prefix))) {
        return { allow: true };
      }
      return {
        allow: false,
        errorKind: 'denied',
        message: `${call.toolName} acts on state every tenant shares; a turn of tenant '${call.memoryTenant}' may not use it`,
      };
    },
  };
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
