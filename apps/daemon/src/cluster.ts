import { agentRuntimeMigrationSet } from '@agentd/agent-runtime';
import { approvalsMigrationSet } from '@agentd/approvals';
import { autonomyMigrationSet } from '@agentd/autonomy';
import { channelsMigrationSet } from '@agentd/channels';
import { sectionHashes } from '@agentd/config-store';
import { cronWakegateMigrationSet } from '@agentd/cron-wakegate';
import { graphEngineMigrationSet } from '@agentd/graph-engine';
import { learningMigrationSet } from '@agentd/learning';
import type { AgentdLogger } from '@agentd/logging';
import { memoryMigrationSet } from '@agentd/memory-store';
import { obsReportsMigrationSet } from '@agentd/obs-reports';
import {
  type Coordinator,
  type Database,
  isPostgresUrl,
  type MigrationSet,
  openCoordination,
  StorageError,
} from '@agentd/storage';
import { webhookMigrationSet } from '@agentd/webhooks-hmac';
import type { DaemonConfig } from './config-schema.js';
import { VERSION } from './version.js';

/**
 * Config entries that may differ between the instances of one cluster: where each listens and
 * what it calls itself, its own files (logs, the master key file's path), what the first start
 * writes (a token's `createdAt`) and the storage section (every instance reaches the same
 * database, perhaps by another host name). Everything else must hash alike to join.
 */
export const INSTANCE_LOCAL_CONFIG = [
  'gateway.host',
  'gateway.port',
  'gateway.memoryHighWaterMb',
  'gateway.tokens.*.createdAt',
  'storage',
  'daemon',
  'observability',
  'metrics.listen',
  'secrets.masterKeyFile',
  'cluster.instanceId',
  'cluster.advertiseUrl',
  'cluster.allowConfigSkew',
] as const;

/**
 * What still assumes one process with more than one instance: a start in cluster mode logs
 * each entry as a warning. Empty now: every package the daemon runs is cluster-safe.
 */
export const NOT_YET_CLUSTER_SAFE: readonly string[] = [];

/**
 * A store the daemon opens in the database, and the migration set its service runs there:
 * `undefined` for a store not kept in the database on PostgreSQL at all.
 */
export interface DatabaseStore {
  name: string;
  migrations: MigrationSet | readonly unknown[] | undefined;
  /** False when the config leaves the store closed at start. @default true */
  enabled?: (config: DaemonConfig) => boolean;
}

const DATABASE_STORES: readonly DatabaseStore[] = [
  { name: '@agentd/obs-reports', migrations: obsReportsMigrationSet },
  {
    name: '@agentd/memory-store',
    migrations: memoryMigrationSet,
    enabled: (config) => config.memory.enabled,
  },
  { name: '@agentd/agent-runtime', migrations: agentRuntimeMigrationSet },
  { name: '@agentd/cron-wakegate', migrations: cronWakegateMigrationSet },
  { name: '@agentd/graph-engine', migrations: graphEngineMigrationSet },
  { name: '@agentd/approvals', migrations: approvalsMigrationSet },
  { name: '@agentd/autonomy', migrations: autonomyMigrationSet },
  { name: '@agentd/learning', migrations: learningMigrationSet },
  { name: '@agentd/webhooks-hmac', migrations: webhookMigrationSet },
  { name: '@agentd/channels', migrations: channelsMigrationSet() },
];

/** The packages the daemon would open on PostgreSQL that ship no PostgreSQL migrations yet. */
export function unportedPackages(
  config: DaemonConfig,
  stores: readonly DatabaseStore[] = DATABASE_STORES,
): string[] {
  return stores
    .filter((store) => store.enabled?.(config) ?? true)
    .filter(({ migrations }) => {
      if (migrations === undefined || Array.isArray(migrations)) return true;
      return (migrations as { pg?: unknown }).pg === undefined;
    })
    .map((store) => store.name);
}

/** A URL of a remote libsql (sqld/Turso) server, which cannot be a cluster engine. */
function isSqldUrl(url: string): boolean {
  return /^(?:libsql|https?|wss?):\/\//i.test(url);
}

/**
 * Refuses a start the cluster cannot run safely, before the database is opened: a sqld URL
 * with cluster settings, or PostgreSQL while some package has no PostgreSQL migrations (all of
 * them are named). Answers the mode the storage URL selects.
 */
export function checkClusterStart(
  config: DaemonConfig,
  storageUrl: string | undefined,
): 'postgres' | 'single' {
  const clusterKeys = Object.keys(config.cluster);
  if (storageUrl !== undefined && isPostgresUrl(storageUrl)) {
    const unported = unportedPackages(config);
    if (unported.length > 0) {
      throw new StorageError(
        'MIGRATION_INVALID',
        `Cluster mode (a postgres:// storage URL) cannot start: ${unported.join(', ')} ` +
          `${unported.length === 1 ? 'has' : 'have'} no PostgreSQL migrations yet; use a file: storage URL`,
        { data: { packages: unported } },
      );
    }
    return 'postgres';
  }
  if (storageUrl !== undefined && isSqldUrl(storageUrl) && clusterKeys.length > 0) {
    throw new StorageError(
      'INVALID_OPTIONS',
      `The cluster section (${clusterKeys.join(', ')}) needs a postgres:// storage URL; a libsql server ` +
        'URL is no cluster engine (one primary serialises every write, with no row locks or notices)',
      { data: { keys: clusterKeys } },
    );
  }
  return 'single';
}

/** What {@link openCluster} needs. */
export interface OpenClusterOptions {
  db: Database;
  config: DaemonConfig;
  log: AgentdLogger;
}

/**
 * Opens and starts the coordinator: in cluster mode it joins (refused on a live duplicate id or
 * configuration that hashes differently, naming the sections) and starts heartbeats and the
 * sweeper; on libsql it is the in-process one. The advertised URL is set once the daemon listens.
 */
export async function openCluster(options: OpenClusterOptions): Promise<Coordinator> {
  const { db, config, log } = options;
  const coordinator = await openCoordination(db, {
    instanceId: config.cluster.instanceId,
    advertiseUrl: config.cluster.advertiseUrl,
    leaseMs: config.cluster.leaseMs,
    // Hashed only where there are peers to compare with: a libsql start stays as it was.
    configSections:
      db.dialect === 'pg'
        ? sectionHashes(config as unknown as Record<string, unknown>, { omit: INSTANCE_LOCAL_CONFIG })
        : undefined,
    allowConfigSkew: config.cluster.allowConfigSkew,
    version: VERSION,
    logger: log,
  });
  try {
    await coordinator.start();
  } catch (error) {
    await coordinator.close().catch(() => undefined);
    throw error;
  }
  if (coordinator.mode === 'postgres' && NOT_YET_CLUSTER_SAFE.length > 0) {
    log.warn(
      {
        instanceId: coordinator.instanceId,
        notYetSafe: [...NOT_YET_CLUSTER_SAFE],
        errorKind: 'config',
        hint: 'run one instance until these are cluster-safe, or accept the listed limits',
      },
      `cluster mode: not yet safe with more than one instance: ${NOT_YET_CLUSTER_SAFE.join('; ')}`,
    );
  } else if (coordinator.mode !== 'postgres' && Object.keys(config.cluster).length > 0) {
    log.warn(
      {
        keys: Object.keys(config.cluster),
        errorKind: 'config',
        hint: 'set storage.url (or AGENTD_STORAGE_URL) to a postgres:// URL to run several instances',
      },
      'the cluster section is set but storage is a local file: this daemon runs alone',
    );
  }
  return coordinator;
}
