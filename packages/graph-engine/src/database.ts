/** A value bound to a statement parameter. */
export type GraphSqlValue = string | number | null;

/** The statement-running methods of a database or a transaction. */
export interface GraphQueryable {
  execute(sql: string, args?: GraphSqlValue[]): Promise<unknown>;
  query<Row = Record<string, unknown>>(sql: string, args?: GraphSqlValue[]): Promise<Row[]>;
  get<Row = Record<string, unknown>>(sql: string, args?: GraphSqlValue[]): Promise<Row | undefined>;
}

/** Coalesces small writes into few transactions; each write resolves once committed. */
export interface GraphWriteBatcher {
  write(sql: string, args?: GraphSqlValue[]): Promise<void>;
  flush(): Promise<void>;
  close(): Promise<void>;
}

/** One schema change of this package. */
export interface GraphMigration {
  version: number;
  name: string;
  up: string[];
}

/** This package's migrations per SQL dialect (libsql, PostgreSQL), as `db.migrate` takes them. */
export interface GraphMigrationSet {
  libsql: GraphMigration[];
  pg: GraphMigration[];
}

/**
 * The database the service keeps runs in. Declared here so the package does not depend on
 * `@agentd/storage`; its `Database` satisfies this interface.
 */
export interface GraphDatabase extends GraphQueryable {
  /** The SQL dialect (`@agentd/storage` sets it); PostgreSQL means cluster mode. */
  readonly dialect?: 'libsql' | 'pg' | undefined;
  /** Runs `callback` in one write transaction (rolled back when it throws). */
  transaction<T>(callback: (tx: GraphQueryable) => Promise<T>): Promise<T>;
  /** Applies this package's pending migrations. */
  migrate(packageName: string, migrations: GraphMigrationSet): Promise<unknown>;
  /** A batcher for the per-node progress writes. */
  createWriteBatcher(options?: { maxBatch?: number; maxDelayMs?: number }): GraphWriteBatcher;
}
