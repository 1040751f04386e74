import { AuthScopesError, openTokenTable, type TokenConfig, type TokenStore } from '@agentd/auth-scopes';
import type { AgentdLogger } from '@agentd/logging';
import type { Coordinator, Database } from '@agentd/storage';

/** The bus topic a token change is announced on. */
const TOKENS_TOPIC = 'auth.tokens';

/** Cluster-mode token persistence: the `auth_tokens` table instead of each instance's config.yaml. */
export interface ClusterTokens {
  /** The table's tokens as last read, placed after the configured ones. */
  withStored(configured: readonly TokenConfig[]): TokenConfig[];
  /** The token store's `persist`: writes what changed among API tokens, then announces it. */
  persist(next: TokenConfig[]): Promise<void>;
  /**
   * Follows changes made on any instance (a notice, or the bus's polling backstop): the store is
   * given configured plus stored tokens, so a token revoked elsewhere is dropped here and its
   * sockets close. Returns the stop function.
   */
  follow(store: TokenStore, configured: () => Promise<TokenConfig[]>): () => void;
}

/**
 * Opens the table and reads it once. `configuredIds` answers the ids in config.yaml now: those
 * stay there (read-only in a cluster), and revoking one is refused instead of half done.
 */
export async function openClusterTokens(options: {
  db: Database;
  coordinator: Coordinator;
  configuredIds: () => ReadonlySet<string>;
  log: AgentdLogger;
}): Promise<ClusterTokens> {
  const { db, coordinator, configuredIds, log } = options;
  const table = await openTokenTable(db);
  let stored = await table.list();
  return {
    withStored: (configured) => {
      const ids = new Set(configured.map((entry) => entry.id));
      return [...configured, ...stored.filter((entry) => !ids.has(entry.id))];
    },
    async persist(next) {
      const configured = configuredIds();
      const nextIds = new Set(next.map((entry) => entry.id));
      const dropped = [...configured].filter((id) => !nextIds.has(id));
      if (dropped.length > 0) {
        throw new AuthScopesError(
          'PERSIST_FAILED',
          `Token '${dropped[0]}' is listed in config.yaml; in cluster mode remove it there on every instance`,
          { data: { id: dropped[0] } },
        );
      }
      const storedIds = new Set(stored.map((entry) => entry.id));
      const added = next.filter((entry) => !configured.has(entry.id) && !storedIds.has(entry.id));
      const removed = [...storedIds].filter((id) => !nextIds.has(id));
      await table.apply({ added, removed });
      stored = [...stored.filter((entry) => nextIds.has(entry.id)), ...added];
      await coordinator.bus.publish(TOKENS_TOPIC, { added: added.map((entry) => entry.id), removed });
    },
    follow(store, configured) {
      return coordinator.bus.watch(TOKENS_TOPIC, async () => {
        try {
          stored = await table.list();
          const configuredTokens = await configured();
          const ids = new Set(configuredTokens.map((entry) => entry.id));
          store.replace([...configuredTokens, ...stored.filter((entry) => !ids.has(entry.id))]);
        } catch (error) {
          log.warn(
            {
              err: error,
              errorKind: 'dependency',
              hint: 'the next notice or poll reads the auth_tokens table again',
            },
            'token table not re-read',
          );
        }
      });
    },
  };
}
