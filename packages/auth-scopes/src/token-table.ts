import type { Database, DialectMigrations } from '@agentd/storage';
import { AuthScopesError } from './errors.js';
import { type Scope, scopeSchema } from './scopes.js';
import { type TokenConfig, tokenConfigSchema } from './token-config.js';

/** The migration key the token table records in `_migrations`. */
export const AUTH_TOKENS_MIGRATION_PACKAGE = '@agentd/auth-scopes';

const columns = (bigint: string) => `
  id TEXT PRIMARY KEY,
  client_id TEXT NOT NULL,
  scopes TEXT NOT NULL,
  token_hash TEXT NOT NULL UNIQUE,
  created_at ${bigint},
  source TEXT NOT NULL DEFAULT 'api',
  tenant TEXT,
  session_prefixes TEXT`;

/**
 * The `auth_tokens` table, per dialect: API-made tokens as hashes only (`sha256:<hex>`), never
 * a secret. Epoch-ms `created_at` is BIGINT on PostgreSQL.
 */
export const authTokensMigrations: DialectMigrations = {
  libsql: [{ version: 1, name: 'auth tokens', up: [`CREATE TABLE auth_tokens (${columns('INTEGER')})`] }],
  pg: [{ version: 1, name: 'auth tokens', up: [`CREATE TABLE auth_tokens (${columns('BIGINT')})`] }],
};

interface TokenRow {
  id: string;
  client_id: string;
  scopes: string;
  token_hash: string;
  created_at: number | string | null;
  source: string;
  tenant: string | null;
  session_prefixes: string | null;
}

/** A change to the table: tokens made since the last write, and ids revoked. */
export interface TokenTableChange {
  added: readonly TokenConfig[];
  removed: readonly string[];
}

/**
 * Gateway tokens kept in the database, so every daemon on it (a cluster) authenticates the
 * same tokens. Rows are written one by one, never as a whole list, so two instances creating
 * tokens at once keep both.
 */
export interface TokenTable {
  /** Every stored token, as `gateway.tokens` entries (hash only, source `api`), oldest first. */
  list(): Promise<TokenConfig[]>;
  /**
   * Inserts `added` and deletes `removed` in one transaction. An added id already stored with
   * the same hash is kept as it is (two instances bootstrapping the same admin token); with
   * another hash it fails `TOKEN_EXISTS` and nothing is written.
   */
  apply(change: TokenTableChange): Promise<void>;
}

/** Creates `auth_tokens` (both dialects) when missing and answers the table. */
export async function openTokenTable(db: Database): Promise<TokenTable> {
  await db.migrate(AUTH_TOKENS_MIGRATION_PACKAGE, authTokensMigrations);
  return {
    async list() {
      const rows = await db.query<TokenRow>('SELECT * FROM auth_tokens ORDER BY created_at, id');
      return rows.map(fromRow);
    },
    async apply(change) {
      // Checked before the transaction: a malformed entry writes nothing.
      for (const given of change.added) tokenConfigSchema.parse(given);
      await db.transaction(async (tx) => {
        for (const id of change.removed) await tx.execute('DELETE FROM auth_tokens WHERE id = ?', [id]);
        for (const given of change.added) {
          const token = tokenConfigSchema.parse(given);
          const hash = token.tokenHash?.toLowerCase();
          if (hash === undefined) {
            throw new AuthScopesError('INVALID_ARGUMENT', `Token '${token.id}' has no hash to store`, {
              data: { id: token.id },
            });
          }
          const inserted = await tx.execute(
            `INSERT INTO auth_tokens (id, client_id, scopes, token_hash, created_at, source, tenant, session_prefixes)
             VALUES (?, ?, ?, ?, ?, 'api', ?, ?) ON CONFLICT DO NOTHING`,
            [
              token.id,
              token.clientId,
              JSON.stringify(token.scopes),
              hash,
              token.createdAt ?? null,
              token.tenant ?? null,
              token.sessionPrefixes === undefined ? null : JSON.stringify(token.sessionPrefixes),
            ],
          );
          if (inserted.rowsAffected > 0) continue;
          const stored = await tx.get<{ id: string; token_hash: string }>(
            'SELECT id, token_hash FROM auth_tokens WHERE id = ? OR token_hash = ?',
            [token.id, hash],
          );
          if (stored?.id !== token.id || stored.token_hash !== hash) {
            throw new AuthScopesError(
              'TOKEN_EXISTS',
              `Token '${stored?.id ?? token.id}' is already stored ${stored?.id === token.id ? 'with another secret' : 'with this secret'}`,
              { data: { id: stored?.id ?? token.id } },
            );
          }
        }
      });
    },
  };
}

/** A stored row as a token entry; a row that does not parse as one is an error, not skipped. */
function fromRow(row: TokenRow): TokenConfig {
  const scopes = (JSON.parse(row.scopes) as unknown[]).map((scope) => scopeSchema.parse(scope) as Scope);
  const entry: Record<string, unknown> = {
    id: row.id,
    clientId: row.client_id,
    scopes,
    tokenHash: row.token_hash,
    source: 'api',
  };
  if (row.created_at !== null) entry.createdAt = Number(row.created_at);
  if (row.tenant !== null) entry.tenant = row.tenant;
  if (row.session_prefixes !== null) entry.sessionPrefixes = JSON.parse(row.session_prefixes) as unknown;
  return tokenConfigSchema.parse(entry);
}
