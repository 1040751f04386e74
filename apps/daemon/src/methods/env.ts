import { SlidingWindowLimiter } from '@agentd/auth-scopes';
import { noopSecurityAudit, type SecurityAudit } from '@agentd/evidence/audit';
import { RpcError } from '@agentd/rpc-core';
import {
  SECRET_LIST_DEFAULT,
  SECRET_LIST_MAX,
  type Secrets,
  secretFilterSchema,
  secretNameSchema,
  secretValueSchema,
} from '@agentd/secrets';
import { z } from 'zod';
import { methodsOf } from './define.js';

const MINUTE_MS = 60_000;
/** The contract's limits: 5 writes and 30 listings per minute, daemon-wide. */
const SET_PER_MINUTE = 5;
const LIST_PER_MINUTE = 30;

/**
 * env.*: set (a secret into the encrypted store, or the `.env` fallback without a master key,
 * then the config sections that reference it are applied again in process) and list (names and
 * metadata, never values). Every write is an `audit:event` of kind `secret` naming the secret
 * and the caller's token id, never the value.
 */
export function envMethods(deps: {
  secrets: Pick<Secrets, 'set' | 'list' | 'storage'>;
  /**
   * Applies the config sections referencing `name` again, so the new value is used at once;
   * false when a section could not be applied (the log says which and why).
   */
  reresolve: (name: string) => Promise<boolean>;
  /** Producer of the `secret` audit events. @default emits nothing */
  audit?: SecurityAudit;
  /** Clock of the rate limits. @default performance.now */
  now?: () => number;
}) {
  const audit = deps.audit ?? noopSecurityAudit;
  const clock = deps.now ? { now: deps.now } : {};
  const writes = new SlidingWindowLimiter({ maxEvents: SET_PER_MINUTE, windowMs: MINUTE_MS, ...clock });
  const listings = new SlidingWindowLimiter({ maxEvents: LIST_PER_MINUTE, windowMs: MINUTE_MS, ...clock });
  const { adminMethod } = methodsOf('env');
  return [
    adminMethod('set', {
      description:
        'Store a secret (encrypted; in <data dir>/.env when no master key is configured) and apply the config that references it.',
      params: z.object({ key: secretNameSchema, value: secretValueSchema }).strict(),
      handler: async ({ key, value }, context) => {
        const refs = {
          action: 'secret_set',
          name: key,
          method: context.method,
          caller: context.identity.tokenId,
        };
        if (!writes.tryAcquire()) {
          audit.emit({
            kind: 'secret',
            classification: 'denied',
            outcome: 'failure',
            severity: 'low',
            ...refs,
            reason: 'rate_limited',
          });
          throw RpcError.rateLimited(`env.set is limited to ${SET_PER_MINUTE} writes per minute`);
        }
        const { storage } = await deps.secrets.set(key, value);
        // A plain-text write is worth more attention than an encrypted one.
        audit.emit({
          kind: 'secret',
          classification: 'allowed',
          outcome: 'success',
          severity: storage === 'env-file' ? 'medium' : 'low',
          ...refs,
          storage,
        });
        // The value is stored either way; `reloaded: false` says a referencing section did not take it.
        const reloaded = await deps.reresolve(key);
        return { set: true as const, key, storage, reloaded };
      },
    }),
    adminMethod('list', {
      description: 'Names and metadata of the stored secrets (a glob filter such as OPENAI_*); never values.',
      params: z
        .object({
          filter: secretFilterSchema.optional(),
          limit: z.number().int().min(1).max(SECRET_LIST_MAX).optional(),
        })
        .strict(),
      handler: async ({ filter, limit }) => {
        if (!listings.tryAcquire()) {
          throw RpcError.rateLimited(`env.list is limited to ${LIST_PER_MINUTE} calls per minute`);
        }
        const secrets = await deps.secrets.list({ filter, limit: limit ?? SECRET_LIST_DEFAULT });
        return { secrets, storage: deps.secrets.storage };
      },
    }),
  ];
}
