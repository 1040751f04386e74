import { bindingIssues, bindingOf, type TenantBinding, tenantBindingShape } from './tenancy.js';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { KeyedMutex } from '@agentd/async-control';
import { z } from 'zod';
import { AuthScopesError } from './errors.js';
import { functionSchema, loggerSchema } from './internal/schemas.js';
import { parseOrThrow } from './internal/validate.js';
import { type AuthScopesLogger, noopLogger } from './logger.js';
import { type Scope, scopeSchema } from './scopes.js';
import { configuredHash, gatewayTokensSchema, type TokenConfig, tokenIdSchema } from './token-config.js';
import { digestToken, generateTokenSecret, TOKEN_HASH_PREFIX } from './token-secret.js';

/** Who a valid bearer secret belongs to. */
export interface Identity {
  /** The token's id (`gateway.tokens[].id`). */
  tokenId: string;
  /** The client the token identifies, for targeted notifications and default session keys. */
  clientId: string;
  /** The scopes the token holds; pass to `hasScope`. */
  scopes: readonly Scope[];
  /** Set for a tenant-bound token: the only tenant whose sessions it reaches. */
  tenant?: string;
  /** Set when the binding is narrowed to session-key prefixes. */
  sessionPrefixes?: readonly string[];
}

/**
 * How the store learned of a token: from configuration (`tokens`/`replace`), through `create`,
 * or through `create` with `sessionTtlMs` (a session token: in memory only, expiring unless used).
 */
export type TokenSource = 'config' | 'api' | 'session';

/** Longest idle time a session token may be given: one week. */
export const MAX_SESSION_TTL_MS = 7 * 24 * 3_600_000;

/** A token as `list()` shows it: never the secret, never its hash. */
export interface TokenSummary {
  id: string;
  clientId: string;
  scopes: Scope[];
  /** Epoch milliseconds, or `null` for a configured token that gave none. */
  createdAt: number | null;
  source: TokenSource;
  /** Session tokens only: epoch milliseconds at which it expires unless used before. */
  expiresAt?: number;
  tenant?: string;
  sessionPrefixes?: string[];
}

/** What `create()` returns: the summary fields plus the secret, shown this one time only. */
export interface CreatedToken {
  id: string;
  clientId: string;
  scopes: Scope[];
  createdAt: number;
  /** The bearer secret. The store keeps only its hash; it cannot be shown again. */
  token: string;
  /** Session tokens only: epoch milliseconds at which it expires unless used before. */
  expiresAt?: number;
  tenant?: string;
  sessionPrefixes?: string[];
}

/** What `replace()` changed, by token id. */
export interface ReplaceResult {
  added: string[];
  /** Ids whose secret, clientId or scopes changed; their old identity was revoked. */
  changed: string[];
  removed: string[];
}

/** Called once per revoked identity, so the daemon can close the sockets it authenticated. */
export type RevokeListener = (tokenId: string, clientId: string) => void;

/** Parameters of `create()`. */
export const createTokenRequestSchema = z
  .object({
    /** Scopes of the new token; at least one. */
    scopes: z.array(scopeSchema).min(1),
    /** Client identity; defaults to the token id. */
    clientId: z.string().min(1).max(256).optional(),
    /** Token id; defaults to a generated `tok_<hex>` id. */
    id: tokenIdSchema.optional(),
    /**
     * A caller-chosen secret (used by `ensureBootstrapToken` for
     * `AGENTD_ADMIN_TOKEN`); generated when absent. Leave it out of any
     * network-facing schema so remote callers cannot pick secrets.
     */
    secret: z.string().min(1).optional(),
    /**
     * Makes a session token: kept in memory only (never persisted, gone at a restart), listed
     * with source `session` and its `expiresAt`, and expired once this long passes without use
     * (every authentication and `touch` renews it).
     */
    sessionTtlMs: z.number().int().min(1000).max(MAX_SESSION_TTL_MS).optional(),
    ...tenantBindingShape,
  })
  .superRefine((value, context) => {
    for (const issue of bindingIssues(value)) context.addIssue({ code: 'custom', ...issue });
  });

/** Parameters of `create()`. */
export type CreateTokenRequest = z.input<typeof createTokenRequestSchema>;

/** Options of {@link createTokenStore}. */
export interface TokenStoreOptions {
  /**
   * The configured tokens (`gateway.tokens`). Plaintext secrets are hashed
   * here and the plaintext is not retained.
   * @default []
   */
  tokens?: readonly TokenConfig[] | undefined;
  /**
   * Clock for `createdAt`, in epoch milliseconds.
   * @default Date.now
   */
  now?: (() => number) | undefined;
  /**
   * Id generator for `create()` calls that give no id.
   * @default () => `tok_${12 random hex digits}`
   */
  randomId?: (() => string) | undefined;
  /**
   * Saves the complete token list (hashes only, never a plaintext secret)
   * after `create` or `revoke`. When it throws, the mutation is undone and
   * `PERSIST_FAILED` is thrown. Not called by `replace`, which reads config.
   * @default none (changes live in memory only)
   */
  persist?: ((tokens: TokenConfig[]) => Promise<void>) | undefined;
  /**
   * pino-compatible logger. Never receives a secret or a hash.
   * @default a no-op logger
   */
  logger?: AuthScopesLogger | undefined;
}

/** Holds the gateway's tokens and answers who a bearer secret belongs to. */
export interface TokenStore {
  /**
   * The identity of `secret`, or `null` when it matches no live token. The
   * secret's SHA-256 digest is compared with `timingSafeEqual` against every
   * token's digest, so the time taken does not depend on which token, or how
   * much of one, matched. A token being revoked is refused at once.
   */
  authenticate(secret: string | undefined | null): Identity | null;
  /** Every token, without secrets or hashes, in insertion order. */
  list(): TokenSummary[];
  /** Creates a token and returns its secret, once. Persisted before it becomes usable. */
  create(request: CreateTokenRequest): Promise<CreatedToken>;
  /** Revokes a token: refused at once, persisted, then `onRevoke` listeners run. */
  revoke(id: string): Promise<{ revoked: true; id: string }>;
  /**
   * Marks token `id` as in use (a call made with it): a session token's expiry moves to now
   * plus its idle time. `false` only when `id` is a session token already past its expiry,
   * which is then dropped like a revoked one (`onRevoke` runs); `true` otherwise.
   */
  touch(id: string): boolean;
  /**
   * Swaps in a new configured token list (config hot-reload). Tokens that
   * disappear, or whose secret, clientId or scopes change, fire `onRevoke`.
   * Unchanged tokens keep their `source` and `createdAt`.
   */
  replace(tokens: readonly TokenConfig[]): ReplaceResult;
  /** Subscribes to revocations; returns the unsubscribe function. */
  onRevoke(listener: RevokeListener): () => void;
  /** How many tokens the store holds. */
  readonly size: number;
}

interface Entry {
  id: string;
  clientId: string;
  scopes: readonly Scope[];
  hash: string;
  digest: Buffer;
  createdAt: number | null;
  source: TokenSource;
  /** Count of in-flight revocations; while above zero the token is refused. */
  revoking: number;
  binding: TenantBinding | undefined;
  /** Session tokens: idle time, and when it runs out. */
  session?: { ttlMs: number; expiresAt: number };
}

const optionsSchema = z.object({
  tokens: z.unknown().optional(),
  now: functionSchema.optional(),
  randomId: functionSchema.optional(),
  persist: functionSchema.optional(),
  logger: loggerSchema.optional(),
});

/** Scopes in a fixed order without repeats, so equal sets compare equal. */
function normalizeScopes(scopes: readonly Scope[]): readonly Scope[] {
  const order: Scope[] = ['rpc', 'admin', '*'];
  return Object.freeze(order.filter((scope) => scopes.includes(scope)));
}

function sameScopes(left: readonly Scope[], right: readonly Scope[]): boolean {
  return left.length === right.length && left.every((scope, index) => scope === right[index]);
}

function entryFromConfig(config: TokenConfig): Entry {
  const hash = configuredHash(config);
  return {
    id: config.id,
    clientId: config.clientId,
    scopes: normalizeScopes(config.scopes),
    hash,
    digest: Buffer.from(hash.slice(TOKEN_HASH_PREFIX.length), 'hex'),
    createdAt: config.createdAt ?? null,
    source: config.source ?? 'config',
    revoking: 0,
    binding: bindingOf(config),
  };
}

/** The binding fields as they are written into a config entry, summary or identity. */
function bindingFields(binding: TenantBinding | undefined): { tenant?: string; sessionPrefixes?: string[] } {
  if (binding === undefined) return {};
  return binding.sessionPrefixes === undefined
    ? { tenant: binding.tenant }
    : { tenant: binding.tenant, sessionPrefixes: [...binding.sessionPrefixes] };
}

function sameBinding(left: TenantBinding | undefined, right: TenantBinding | undefined): boolean {
  return JSON.stringify(bindingFields(left)) === JSON.stringify(bindingFields(right));
}

function toConfig(entry: Entry): TokenConfig {
  const config: TokenConfig = {
    id: entry.id,
    clientId: entry.clientId,
    scopes: [...entry.scopes],
    tokenHash: entry.hash,
  };
  if (entry.createdAt !== null) config.createdAt = entry.createdAt;
  if (entry.source === 'api') config.source = 'api';
  return { ...config, ...bindingFields(entry.binding) };
}

function defaultRandomId(): string {
  return `tok_${randomBytes(6).toString('hex')}`;
}

/**
 * Builds a {@link TokenStore} from the configured tokens. Throws
 * `INVALID_OPTIONS` for bad options and `INVALID_TOKEN_CONFIG` for a bad
 * token list (duplicate ids or secrets, malformed hashes, no scopes).
 */
export function createTokenStore(options: TokenStoreOptions = {}): TokenStore {
  parseOrThrow(optionsSchema, options, 'INVALID_OPTIONS', 'token store options');
  const now = options.now ?? Date.now;
  const randomId = options.randomId ?? defaultRandomId;
  const persist = options.persist;
  const logger = options.logger ?? noopLogger;

  let entries = new Map<string, Entry>();
  for (const config of parseOrThrow(
    gatewayTokensSchema,
    options.tokens ?? [],
    'INVALID_TOKEN_CONFIG',
    'gateway tokens',
  )) {
    entries.set(config.id, entryFromConfig(config));
  }

  const listeners = new Set<RevokeListener>();

  function notifyRevoked(entry: Entry): void {
    for (const listener of listeners) {
      try {
        listener(entry.id, entry.clientId);
      } catch (error) {
        // One failing listener must not stop the others from closing sockets.
        logger.error(
          {
            err: error,
            tokenId: entry.id,
            errorKind: 'internal',
            hint: 'connections using the revoked token may stay open until they reconnect; see err for the failing listener',
          },
          'token revoke listener failed',
        );
      }
    }
  }

  // create and revoke persist the whole list, so they run one at a time:
  // otherwise a rollback of one could erase another's committed change.
  const lane = new KeyedMutex();
  const serialize = <T>(operation: () => Promise<T>): Promise<T> => lane.run('tokens', operation);

  async function save(next: Entry[]): Promise<void> {
    if (persist === undefined) return;
    try {
      // Session tokens live in memory only.
      await persist(next.filter((entry) => entry.session === undefined).map(toConfig));
    } catch (error) {
      logger.warn(
        {
          err: error,
          errorKind: 'resource',
          hint: 'the token list could not be saved (see err); check that the config file is writable and the disk has space, then retry',
        },
        'persisting gateway tokens failed; change rolled back',
      );
      throw new AuthScopesError(
        'PERSIST_FAILED',
        'Persisting gateway tokens failed; the change was rolled back',
        {
          cause: error,
        },
      );
    }
  }

  /** Drops a session token past its expiry, as a revocation (its sockets close). */
  function expireIfDue(entry: Entry): boolean {
    if (entry.session === undefined || now() < entry.session.expiresAt) return false;
    if (entries.get(entry.id) === entry) {
      entries.delete(entry.id);
      logger.info({ tokenId: entry.id, clientId: entry.clientId }, 'gateway session token expired');
      notifyRevoked(entry);
    }
    return true;
  }

  function sweepExpired(): void {
    for (const entry of [...entries.values()]) expireIfDue(entry);
  }

  function renew(entry: Entry): void {
    if (entry.session) entry.session.expiresAt = now() + entry.session.ttlMs;
  }

  function nextId(): string {
    // A handful of retries makes a clash of 48-bit random ids irrelevant while
    // still stopping a broken injected generator from looping forever.
    for (let attempt = 0; attempt < 8; attempt += 1) {
      const candidate = parseOrThrow(tokenIdSchema, randomId(), 'INVALID_ARGUMENT', 'generated token id');
      if (!entries.has(candidate)) return candidate;
    }
    throw new AuthScopesError('TOKEN_EXISTS', 'Could not generate an unused token id', {});
  }

  return {
    authenticate(secret) {
      if (typeof secret !== 'string' || secret.length === 0) return null;
      const digest = digestToken(secret);
      let found: Entry | undefined;
      // Every entry is compared, with no early exit, so the loop's duration
      // says nothing about where (or whether) a match sits.
      for (const entry of entries.values()) {
        if (timingSafeEqual(entry.digest, digest) && found === undefined) found = entry;
      }
      if (found === undefined || found.revoking > 0 || expireIfDue(found)) return null;
      renew(found);
      return {
        tokenId: found.id,
        clientId: found.clientId,
        scopes: found.scopes,
        ...bindingFields(found.binding),
      };
    },

    list() {
      sweepExpired();
      return [...entries.values()].map((entry) => ({
        id: entry.id,
        clientId: entry.clientId,
        scopes: [...entry.scopes],
        createdAt: entry.createdAt,
        source: entry.source,
        ...(entry.session ? { expiresAt: entry.session.expiresAt } : {}),
        ...bindingFields(entry.binding),
      }));
    },

    touch(id) {
      const entry = entries.get(id);
      if (entry === undefined) return true;
      if (expireIfDue(entry)) return false;
      renew(entry);
      return true;
    },

    create(request) {
      let parsed: z.output<typeof createTokenRequestSchema>;
      try {
        parsed = parseOrThrow(createTokenRequestSchema, request, 'INVALID_ARGUMENT', 'token request');
      } catch (error) {
        // Callers await create; a rejection is what they handle, not a synchronous throw.
        return Promise.reject(error);
      }
      return serialize(async () => {
        const id = parsed.id ?? nextId();
        if (entries.has(id)) {
          throw new AuthScopesError('TOKEN_EXISTS', `Token already exists: ${id}`, { data: { id } });
        }
        const secret = parsed.secret ?? generateTokenSecret();
        const digest = digestToken(secret);
        const hash = TOKEN_HASH_PREFIX + digest.toString('hex');
        for (const entry of entries.values()) {
          if (entry.hash === hash) {
            throw new AuthScopesError('TOKEN_EXISTS', `Token '${entry.id}' already uses this secret`, {
              data: { id: entry.id },
            });
          }
        }
        const createdAt = now();
        const ttlMs = parsed.sessionTtlMs;
        const entry: Entry = {
          id,
          clientId: parsed.clientId ?? id,
          scopes: normalizeScopes(parsed.scopes),
          hash,
          digest,
          createdAt,
          source: ttlMs === undefined ? 'api' : 'session',
          revoking: 0,
          binding: bindingOf(parsed),
          ...(ttlMs === undefined ? {} : { session: { ttlMs, expiresAt: createdAt + ttlMs } }),
        };
        // Persist first, install second: a failed save leaves nothing to undo.
        if (entry.session === undefined) await save([...entries.values(), entry]);
        const existing = entries.get(id);
        if (existing !== undefined && existing.hash === hash) {
          // A config reload triggered by our own save got here first; adopt it.
          existing.source = 'api';
          existing.createdAt = entry.createdAt;
        } else {
          if (existing !== undefined) {
            entries.delete(id);
            notifyRevoked(existing);
          }
          entries.set(id, entry);
        }
        logger.info(
          { tokenId: id, clientId: entry.clientId, scopes: [...entry.scopes] },
          'gateway token created',
        );
        return {
          id,
          clientId: entry.clientId,
          scopes: [...entry.scopes],
          createdAt: entry.createdAt as number,
          token: secret,
          ...(entry.session ? { expiresAt: entry.session.expiresAt } : {}),
          ...bindingFields(entry.binding),
        };
      });
    },

    revoke(id) {
      // Refuse the token now, not after earlier queued saves complete.
      const early = entries.get(id);
      if (early !== undefined) early.revoking += 1;
      return serialize(async () => {
        const entry = entries.get(id);
        if (early !== undefined && early !== entry) early.revoking -= 1;
        if (entry === undefined) {
          throw new AuthScopesError('TOKEN_NOT_FOUND', `Token not found: ${id}`, { data: { id } });
        }
        if (early !== entry) entry.revoking += 1;
        try {
          if (entry.session === undefined)
            await save([...entries.values()].filter((other) => other !== entry));
        } catch (error) {
          entry.revoking -= 1;
          throw error;
        }
        entry.revoking -= 1;
        if (entries.get(id) === entry) entries.delete(id);
        logger.info({ tokenId: id, clientId: entry.clientId }, 'gateway token revoked');
        notifyRevoked(entry);
        return { revoked: true as const, id };
      });
    },

    replace(tokens) {
      const configs = parseOrThrow(gatewayTokensSchema, tokens, 'INVALID_TOKEN_CONFIG', 'gateway tokens');
      const next = new Map<string, Entry>();
      const result: ReplaceResult = { added: [], changed: [], removed: [] };
      for (const config of configs) {
        const fresh = entryFromConfig(config);
        const current = entries.get(config.id);
        if (
          current !== undefined &&
          current.hash === fresh.hash &&
          current.clientId === fresh.clientId &&
          sameScopes(current.scopes, fresh.scopes) &&
          sameBinding(current.binding, fresh.binding)
        ) {
          if (fresh.createdAt !== null) current.createdAt = fresh.createdAt;
          next.set(current.id, current);
          continue;
        }
        (current === undefined ? result.added : result.changed).push(config.id);
        next.set(fresh.id, fresh);
      }
      // Session tokens are not in config: they stay unless a configured token takes their id.
      for (const entry of entries.values()) {
        if (entry.session !== undefined && !next.has(entry.id)) next.set(entry.id, entry);
      }
      const dropped: Entry[] = [];
      for (const entry of entries.values()) {
        if (next.get(entry.id) === entry) continue;
        dropped.push(entry);
        if (!next.has(entry.id)) result.removed.push(entry.id);
      }
      entries = next;
      for (const entry of dropped) notifyRevoked(entry);
      if (result.added.length + result.changed.length + result.removed.length > 0) {
        logger.info({ ...result }, 'gateway tokens replaced');
      }
      return result;
    },

    onRevoke(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },

    get size() {
      return entries.size;
    },
  };
}
