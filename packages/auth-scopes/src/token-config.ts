import { bindingIssues, tenantBindingShape } from './tenancy.js';
import { z } from 'zod';
import { scopeSchema } from './scopes.js';
import { hashToken } from './token-secret.js';

const TOKEN_HASH_PATTERN = /^sha256:[0-9a-fA-F]{64}$/;

/** Token ids appear in logs, URLs and config keys, so they stay short and plain. */
const TOKEN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/** Schema of a token id: 1..128 characters of letters, digits, `.`, `_`, `:` and `-`, starting alphanumeric. */
export const tokenIdSchema = z
  .string()
  .regex(TOKEN_ID_PATTERN, 'token id must be 1-128 characters of letters, digits, ".", "_", ":" or "-"');

/**
 * One entry of `gateway.tokens[]`. Exactly one of `token` (the plaintext
 * secret, hashed once when loaded) or `tokenHash` (`sha256:<64 hex>`, as
 * produced by `hashToken`) must be given.
 */
export const tokenConfigSchema = z
  .object({
    /** Stable identifier used by `tokens.list` and `tokens.revoke`. */
    id: tokenIdSchema,
    /** Identifies the client for targeted notifications and default session keys. */
    clientId: z.string().min(1).max(256),
    /** At least one of `rpc`, `admin`, `*`. */
    scopes: z.array(scopeSchema).min(1),
    /** Plaintext secret. Prefer `tokenHash` in files others can read. */
    token: z.string().min(1).optional(),
    /** `sha256:<64 hex>` digest of the secret. */
    tokenHash: z
      .string()
      .regex(TOKEN_HASH_PATTERN, 'tokenHash must be "sha256:" followed by 64 hex digits')
      .optional(),
    /** Epoch milliseconds at which the token was created. */
    createdAt: z.number().int().nonnegative().optional(),
    /**
     * `api` for tokens made by `create` (tokens.create, the CLI, the bootstrap), so the
     * origin survives restarts; absent (read as `config`) for tokens written by hand.
     */
    source: z.enum(['config', 'api']).optional(),
    ...tenantBindingShape,
  })
  .refine((value) => (value.token === undefined) !== (value.tokenHash === undefined), {
    message: 'exactly one of token or tokenHash is required',
    path: ['token'],
  })
  .superRefine((value, context) => {
    for (const issue of bindingIssues(value)) context.addIssue({ code: 'custom', ...issue });
  });

/** One configured token, as accepted by `gateway.tokens[]`. */
export type TokenConfig = z.infer<typeof tokenConfigSchema>;

/** The stored hash of a configured token, lower-cased, whichever form it was given in. */
export function configuredHash(config: Pick<TokenConfig, 'token' | 'tokenHash'>): string {
  if (config.tokenHash !== undefined) return config.tokenHash.toLowerCase();
  return hashToken(config.token ?? '');
}

/**
 * The whole `gateway.tokens` list (default `[]`). Ids must be unique, and no
 * two entries may share a secret, since a secret must map to one identity.
 */
export const gatewayTokensSchema = z
  .array(tokenConfigSchema)
  .superRefine((tokens, context) => {
    const ids = new Map<string, number>();
    const hashes = new Map<string, number>();
    tokens.forEach((token, index) => {
      const firstId = ids.get(token.id);
      if (firstId !== undefined) {
        context.addIssue({
          code: 'custom',
          message: `duplicate token id '${token.id}' (also at index ${firstId})`,
          path: [index, 'id'],
        });
      } else {
        ids.set(token.id, index);
      }
      const hash = configuredHash(token);
      const firstHash = hashes.get(hash);
      if (firstHash !== undefined) {
        context.addIssue({
          code: 'custom',
          message: `token '${token.id}' has the same secret as the token at index ${firstHash}`,
          path: [index, token.token === undefined ? 'tokenHash' : 'token'],
        });
      } else {
        hashes.set(hash, index);
      }
    });
  })
  .default([]);
