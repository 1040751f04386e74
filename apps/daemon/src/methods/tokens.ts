import { entityIdSchema, sessionKeySchema } from '@agentd/agent-runtime';
import {
  AuthScopesError,
  bindingIssues,
  isLastAdminToken,
  type TokenStore,
  tenantSchema,
} from '@agentd/auth-scopes';
import { RpcError } from '@agentd/rpc-core';
import { z } from 'zod';
import {
  type AuditClassification,
  type AuditOutcome,
  type AuditSeverity,
  noopSecurityAudit,
  type SecurityAudit,
  scopeTokens,
  tokenSeverity,
} from '@agentd/evidence/audit';
import { methodsOf } from './define.js';

const scopeSchema = z.enum(['rpc', 'admin', '*']);
// The token store's own id rule starts with a letter or digit: an id it refuses ('.', '-x') must
// be a -32602 here, not a store failure answered -32603. The entity id rule (1-64 characters,
// alphanumeric first, no reserved names) is that rule.
const idSchema = entityIdSchema;

/** A -32602 naming the `id` field. */
function invalidId(message: string): RpcError {
  return RpcError.invalidParams(`Invalid params: id: ${message}`, [
    { path: ['id'], code: 'custom', message },
  ]);
}

/** A token as the wire shows it: the store's `tenant` is the contract's `tenantId`. */
function withTenantId<T extends { tenant?: string | undefined }>(
  token: T,
): Omit<T, 'tenant'> & { tenantId?: string } {
  const { tenant, ...rest } = token;
  return tenant === undefined ? rest : { ...rest, tenantId: tenant };
}

/**
 * tokens.*: list (never secrets), create (secret shown once), revoke (at once, closes its sockets).
 * Creations and revocations are `audit:event`s of kind `auth` naming the token id (`subject`),
 * its scopes and the caller's token id (`caller`), never a secret.
 */
export function tokenMethods(deps: {
  tokens: TokenStore;
  /** Producer of the lifecycle audit events. @default emits nothing */
  audit?: SecurityAudit;
}) {
  const audit = deps.audit ?? noopSecurityAudit;
  /** One `auth` audit event: the decision, whether the change then happened, and its refs. */
  const auditAuth = (
    classification: AuditClassification,
    outcome: AuditOutcome,
    severity: AuditSeverity,
    refs: Record<string, unknown>,
  ) => audit.emit({ kind: 'auth', classification, outcome, severity, ...refs });
  /** An allowed call the store failed: `low`, with why. */
  const storeFailed = (refs: Record<string, unknown>) => auditAuth('allowed', 'failure', 'low', refs);
  const { adminMethod } = methodsOf('tokens');
  return [
    adminMethod('list', {
      description:
        'Configured and created tokens: ids, clientId, scopes, createdAt, source, tenantId and sessionPrefixes (and expiresAt of a session token); never the secret.',
      handler: () => ({ tokens: deps.tokens.list().map(withTenantId) }),
    }),
    adminMethod('create', {
      description: 'Create a token; the secret is returned once and only its hash is stored.',
      params: z
        .object({
          scopes: z.array(scopeSchema).min(1),
          clientId: idSchema.optional(),
          id: idSchema.optional(),
          // Binds the token to one tenant's sessions (the multi-user setup; README).
          tenantId: tenantSchema.optional(),
          // The name the binding first shipped under, kept as an alias of `tenantId`.
          tenant: tenantSchema.optional(),
          sessionPrefixes: z.array(sessionKeySchema).min(1).max(32).optional(),
        })
        .strict()
        .superRefine((value, issues) => {
          if (value.tenant !== undefined && value.tenantId !== undefined && value.tenant !== value.tenantId) {
            issues.addIssue({
              code: 'custom',
              path: ['tenant'],
              message: 'tenant is an alias of tenantId; give one, or the same value',
            });
          }
          const { tenantId, tenant, ...rest } = value;
          const bound = tenantId ?? tenant;
          const binding = bound === undefined ? rest : { ...rest, tenant: bound };
          for (const issue of bindingIssues(binding)) {
            // The binding's own name for the field is the pinned one.
            const path = issue.path[0] === 'tenant' ? ['tenantId', ...issue.path.slice(1)] : issue.path;
            issues.addIssue({ code: 'custom', ...issue, path });
          }
        }),
      handler: async (params, context) => {
        const refs = {
          action: 'token_create',
          caller: context.identity.tokenId,
          scopes: scopeTokens(params.scopes),
        };
        try {
          const { tenantId, tenant, ...rest } = params;
          const bound = tenantId ?? tenant;
          const created = await deps.tokens.create(bound === undefined ? rest : { ...rest, tenant: bound });
          auditAuth('allowed', 'success', tokenSeverity(created.scopes), {
            ...refs,
            subject: created.id,
            client: created.clientId,
          });
          return withTenantId(created);
        } catch (error) {
          const exists = error instanceof AuthScopesError && error.code === 'TOKEN_EXISTS';
          storeFailed({
            ...refs,
            ...(params.id ? { subject: params.id } : {}),
            reason: exists ? 'exists' : 'error',
          });
          if (exists) throw invalidId(`token id already exists: ${params.id}`);
          throw error;
        }
      },
    }),
    adminMethod('revoke', {
      description: "Revoke a token: new requests fail at once and the token's open sockets are closed.",
      params: z
        .object({
          id: idSchema,
          /** Revoke even the last token that can call admin methods (locks admins out until restart). */
          force: z.boolean().optional(),
        })
        .strict(),
      handler: async ({ id, force }, context) => {
        const all = deps.tokens.list();
        const target = all.find((token) => token.id === id);
        const lastAdmin = isLastAdminToken(all, id);
        const refs = {
          action: 'token_revoke',
          caller: context.identity.tokenId,
          subject: id,
          ...(target ? { scopes: scopeTokens(target.scopes) } : {}),
          forced: force === true,
        };
        if (lastAdmin && !force) {
          auditAuth('denied', 'failure', 'medium', { ...refs, reason: 'last_admin' });
          throw invalidId(
            `'${id}' is the last token with admin scope; revoking it locks every admin out. Create another admin token first, or pass force: true`,
          );
        }
        try {
          const revoked = await deps.tokens.revoke(id);
          // Revoking the last admin token locks every admin out until a restart.
          auditAuth('allowed', 'success', lastAdmin ? 'high' : tokenSeverity(target?.scopes ?? []), refs);
          return revoked;
        } catch (error) {
          const missing = error instanceof AuthScopesError && error.code === 'TOKEN_NOT_FOUND';
          storeFailed({ ...refs, reason: missing ? 'not_found' : 'error' });
          if (missing) throw RpcError.notFound('Token', id);
          throw error;
        }
      },
    }),
  ];
}
