import { z } from 'zod';
import { functionSchema, loggerSchema } from './internal/schemas.js';
import { parseOrThrow } from './internal/validate.js';
import { type AuthScopesLogger, noopLogger } from './logger.js';
import type { TokenStore } from './token-store.js';

/** Environment variable whose value becomes the first admin token. */
export const ADMIN_TOKEN_ENV = 'AGENTD_ADMIN_TOKEN';

/** Id given to the bootstrap token. */
export const BOOTSTRAP_TOKEN_ID = 'admin';

/** Below this length an `AGENTD_ADMIN_TOKEN` is accepted but logged as weak. */
const WEAK_SECRET_LENGTH = 24;

/** Options of {@link ensureBootstrapToken}. */
export interface EnsureBootstrapTokenOptions {
  /** The daemon's token store. */
  store: TokenStore;
  /** Environment to read `AGENTD_ADMIN_TOKEN` from, usually `process.env`. */
  env: Record<string, string | undefined>;
  /**
   * Writes one line for the operator (stdout, not the log: the generated
   * secret must not reach log files). Called only when a token is generated.
   */
  print: (line: string) => void;
  /**
   * How the operator should use the secret, printed after it.
   * @default "Send it as 'Authorization: Bearer <token>' to /ws or /rpc, e.g. with: agentd call system.ping"
   */
  usageHint?: string | undefined;
  /**
   * pino-compatible logger for the non-secret outcome.
   * @default a no-op logger
   */
  logger?: AuthScopesLogger | undefined;
}

/** What {@link ensureBootstrapToken} did. */
export type BootstrapResult =
  /** The store already held tokens; nothing changed. */
  | { action: 'none'; tokenCount: number }
  /** `AGENTD_ADMIN_TOKEN` was stored (hashed) as a `*` token. */
  | { action: 'env'; tokenId: string }
  /** A `*` token was generated, stored hashed, and its secret printed once. */
  | { action: 'generated'; tokenId: string };

const DEFAULT_USAGE_HINT =
  "Send it as 'Authorization: Bearer <token>' to /ws or /rpc, e.g. with: agentd call system.ping";

const optionsSchema = z.object({
  store: z.custom<TokenStore>(
    (value) =>
      typeof value === 'object' && value !== null && typeof (value as TokenStore).create === 'function',
    { message: 'expected a token store' },
  ),
  // process.env is an exotic object that z.record refuses, and only one key is read anyway.
  env: z.custom<Record<string, string | undefined>>((value) => typeof value === 'object' && value !== null, {
    message: 'expected an environment object',
  }),
  print: functionSchema,
  usageHint: z.string().optional(),
  logger: loggerSchema.optional(),
});

/**
 * Makes sure a fresh daemon is reachable. When the store holds no token:
 * `AGENTD_ADMIN_TOKEN`, if set, becomes the `*` token `admin`; otherwise a
 * `*` token `admin` is generated and its secret printed once through `print`,
 * followed by a usage line. Either way only the hash is kept and persisted.
 * When the store already holds tokens it does nothing, so the variable only
 * matters on first start (rotate with `tokens.revoke` and `tokens.create`).
 */
export async function ensureBootstrapToken(options: EnsureBootstrapTokenOptions): Promise<BootstrapResult> {
  parseOrThrow(optionsSchema, options, 'INVALID_OPTIONS', 'bootstrap options');
  const { store, env, print } = options;
  const logger = options.logger ?? noopLogger;
  if (store.size > 0) return { action: 'none', tokenCount: store.size };

  const fromEnv = env[ADMIN_TOKEN_ENV]?.trim();
  if (fromEnv !== undefined && fromEnv !== '') {
    const created = await store.create({ id: BOOTSTRAP_TOKEN_ID, scopes: ['*'], secret: fromEnv });
    if (fromEnv.length < WEAK_SECRET_LENGTH) {
      logger.warn(
        {
          tokenId: created.id,
          length: fromEnv.length,
          errorKind: 'auth',
          hint: `set ${ADMIN_TOKEN_ENV} to at least ${WEAK_SECRET_LENGTH} random characters, or rotate the token`,
        },
        `${ADMIN_TOKEN_ENV} is short and may be guessable`,
      );
    }
    logger.info(
      { tokenId: created.id, scopes: created.scopes },
      `admin token created from ${ADMIN_TOKEN_ENV}`,
    );
    return { action: 'env', tokenId: created.id };
  }

  const created = await store.create({ id: BOOTSTRAP_TOKEN_ID, scopes: ['*'] });
  print(`No gateway tokens were configured; created admin token '${created.id}' (scope *). Shown only once:`);
  print(created.token);
  print(options.usageHint ?? DEFAULT_USAGE_HINT);
  logger.info(
    { tokenId: created.id, scopes: created.scopes },
    'admin token generated and printed to the console',
  );
  return { action: 'generated', tokenId: created.id };
}
