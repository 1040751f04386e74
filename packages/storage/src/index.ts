export { type Database, type DatabaseKind, openDatabase, type TransactionOptions } from './database.js';
export { isPostgresUrl } from './database.js';
export { isStorageError, StorageError, type StorageErrorCode, type StorageErrorOptions } from './errors.js';
export { type ErrorKind, noopLogger, type ProblemFields, type StorageLogger } from './logger.js';
export {
  type AppliedMigration,
  type ColumnTypes,
  columnTypes,
  type Migration,
  type MigrationResult,
  migration,
} from './migrations.js';
export {
  type ClusterSection,
  clusterSectionSchema,
  type OpenDatabaseOptions,
  type StorageSection,
  storageSectionSchema,
} from './options.js';
export type {
  ExecuteResult,
  Queryable,
  SqlArgs,
  SqlRow,
  SqlValue,
  Statement,
  Transaction,
  TransactionMode,
} from './types.js';
export type { WriteBatcher, WriteBatcherOptions, WriteBatcherStats } from './write-batcher.js';
export {
  acquireDataDirLock,
  type DataDirLock,
  type DataDirLockHolder,
  type DataDirLockOptions,
  dataDirLockOptionsSchema,
} from './data-dir-lock.js';
export {
  PRIVATE_DATA_DIR_ENTRIES,
  type RepairPrivateModesOptions,
  type RepairPrivateModesResult,
  repairPrivateModes,
  repairPrivateModesOptionsSchema,
  usePrivateUmask,
} from './private-modes.js';
export {
  type BusMessage,
  type BusRelay,
  type CasDueSpec,
  type Claimed,
  type ClusterBus,
  type CoordinationOptions,
  type Coordinator,
  type FencedWrite,
  type HostAffinity,
  type HostAffinityOptions,
  type InstanceInfo,
  type KeyedLease,
  type KeyedLock,
  type KeyedLockOptions,
  keyedLock,
  localKeyedLock,
  nowMs,
  openCoordination,
  openHostAffinity,
  type OwnedRows,
  type OwnedRowsSpec,
  ownedColumns,
  type Placement,
  relayOverBus,
  type Singleton,
} from './coordination/index.js';
export type { Dialect, DialectMigrations, MigrationSet } from './migrations.js';
