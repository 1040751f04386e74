import { z } from 'zod';

/** A tenant name: what a session key's first segment names (`<tenant>:<channel>:<user>`). */
export const tenantSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'letters, digits, dot, underscore and dash; at most 64');

/**
 * What a tenant-bound token may reach: sessions (and the memory, runs and jobs that belong
 * to them) of one tenant, optionally narrowed to session keys starting with one of
 * `sessionPrefixes` (each starting `<tenant>:`).
 */
export interface TenantBinding {
  tenant: string;
  sessionPrefixes?: readonly string[] | undefined;
}

/** The binding fields of a token (config, create request, identity), checked together. */
export const tenantBindingShape = {
  /** Binds the token to one tenant: it sees and touches only that tenant's sessions. */
  tenant: tenantSchema.optional(),
  /** With `tenant`: only session keys starting with one of these (each `<tenant>:…`). */
  sessionPrefixes: z.array(z.string().min(1).max(256)).min(1).max(32).optional(),
};

/** Issues of a binding: prefixes need a tenant and must lie inside it; admin reach cannot be bound. */
export function bindingIssues(value: {
  tenant?: string | undefined;
  sessionPrefixes?: readonly string[] | undefined;
  scopes: readonly string[];
}): Array<{ path: string[]; message: string }> {
  const issues: Array<{ path: string[]; message: string }> = [];
  if (value.sessionPrefixes !== undefined && value.tenant === undefined) {
    issues.push({ path: ['sessionPrefixes'], message: 'sessionPrefixes needs a tenant' });
  }
  if (value.tenant !== undefined) {
    if (value.scopes.some((scope) => scope !== 'rpc')) {
      issues.push({
        path: ['scopes'],
        message: "a tenant-bound token holds the 'rpc' scope only (admin reaches every tenant)",
      });
    }
    value.sessionPrefixes?.forEach((prefix, index) => {
      if (!prefix.startsWith(`${value.tenant}:`)) {
        issues.push({
          path: ['sessionPrefixes', String(index)],
          message: `a session prefix must start with '${value.tenant}:'`,
        });
      }
    });
  }
  return issues;
}

/**
 * Whether a caller with this binding (none: unbound, full reach) may use session `sessionKey`:
 * one of its tenant, and under one of its prefixes (whole key segments), when it has some.
 */
export function allowsSession(binding: TenantBinding | undefined, sessionKey: string): boolean {
  if (binding === undefined) return true;
  if (!sessionKey.startsWith(`${binding.tenant}:`)) return false;
  return (
    binding.sessionPrefixes === undefined ||
    binding.sessionPrefixes.some((prefix) => withinPrefix(sessionKey, prefix))
  );
}

/**
 * Whether `sessionKey` lies under `prefix` by whole `:`-separated segments: `globex:chat:bob`
 * admits itself and `globex:chat:bob:…`, never `globex:chat:bobby`. A prefix ending in `:`
 * already ends on a segment boundary.
 */
function withinPrefix(sessionKey: string, prefix: string): boolean {
  if (prefix.endsWith(':')) return sessionKey.startsWith(prefix);
  return sessionKey === prefix || sessionKey.startsWith(`${prefix}:`);
}

/** The binding an identity carries, if any (identities of unbound tokens carry none). */
export function bindingOf(identity: {
  tenant?: string | undefined;
  sessionPrefixes?: readonly string[] | undefined;
}): TenantBinding | undefined {
  if (identity.tenant === undefined) return undefined;
  return identity.sessionPrefixes === undefined
    ? { tenant: identity.tenant }
    : { tenant: identity.tenant, sessionPrefixes: identity.sessionPrefixes };
}
