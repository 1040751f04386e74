import { AuthScopesError, type TokenStore } from '@agentd/auth-scopes';
import { defineMethod, RpcError } from '@agentd/rpc-core';
import { z } from 'zod';

const scopeSchema = z.enum(['rpc', 'admin', '*']);
const idSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9._-]+$/, 'letters, digits, dot, underscore and dash only');

/** tokens.*: list (never secrets), create (secret shown once), revoke (at once, closes its sockets). */
export function tokenMethods(deps: { tokens: TokenStore }) {
  return [
    defineMethod({
      name: 'tokens.list',
      scope: 'admin',
      description: 'Configured and created tokens: ids, clientId, scopes, createdAt; never the secret.',
      params: z.object({}).strict(),
      handler: () => ({ tokens: deps.tokens.list() }),
    }),
    defineMethod({
      name: 'tokens.create',
      scope: 'admin',
      description: 'Create a token; the secret is returned once and only its hash is stored.',
      params: z
        .object({
          scopes: z.array(scopeSchema).min(1),
          clientId: idSchema.optional(),
          id: idSchema.optional(),
        })
        .strict(),
      handler: async (params) => {
        try {
          return await deps.tokens.create(params);
        } catch (error) {
          if (error instanceof AuthScopesError && error.code === 'TOKEN_EXISTS') {
            const message = `token id already exists: ${params.id}`;
            throw RpcError.invalidParams(`Invalid params: id: ${message}`, [
              { path: ['id'], code: 'custom', message },
            ]);
          }
          throw error;
        }
      },
    }),
    defineMethod({
      name: 'tokens.revoke',
      scope: 'admin',
      description: "Revoke a token: new requests fail at once and the token's open sockets are closed.",
      params: z
        .object({
          id: idSchema,
          /** Revoke even the last token that can call admin methods (locks admins out until restart). */
          force: z.boolean().optional(),
        })
        .strict(),
      handler: async ({ id, force }) => {
        const all = deps.tokens.list();
        const target = all.find((token) => token.id === id);
        const isAdmin = (scopes: readonly string[]) => scopes.includes('*') || scopes.includes('admin');
        if (
          target &&
          isAdmin(target.scopes) &&
          !force &&
          all.filter((token) => isAdmin(token.scopes)).length === 1
        ) {
          const message = `'${id}' is the last token with admin scope; revoking it locks every admin out. Create another admin token first, or pass force: true`;
          throw RpcError.invalidParams(`Invalid params: id: ${message}`, [
            { path: ['id'], code: 'custom', message },
          ]);
        }
        try {
          return await deps.tokens.revoke(id);
        } catch (error) {
          if (error instanceof AuthScopesError && error.code === 'TOKEN_NOT_FOUND')
            throw RpcError.notFound('Token', id);
          throw error;
        }
      },
    }),
  ];
}
