import type { GraphMigration } from '../database.js';

/** The package name migrations are recorded under. */
export const MIGRATION_PACKAGE = '@agentd/graph-engine';

/** Tables: defined graphs, saved named graphs, runs (with their definition), per-node state. */
export const migrations: GraphMigration[] = [
  {
    version: 1,
    name: 'graphs and runs',
    up: [
      `CREATE TABLE graph_definitions (
        graph_id TEXT PRIMARY KEY,
        name TEXT,
        definition TEXT NOT NULL,
        node_count INTEGER NOT NULL,
        created_at INTEGER NOT NULL
      )`,
      `CREATE TABLE graph_saved (
        name TEXT PRIMARY KEY,
        source_graph_id TEXT NOT NULL,
        definition TEXT NOT NULL,
        node_count INTEGER NOT NULL,
        created_at INTEGER NOT NULL
      )`,
      `CREATE TABLE graph_runs (
        run_id TEXT PRIMARY KEY,
        graph_id TEXT NOT NULL,
        status TEXT NOT NULL,
        definition TEXT NOT NULL,
        node_count INTEGER NOT NULL,
        inputs TEXT NOT NULL,
        concurrency INTEGER NOT NULL,
        default_agent_id TEXT,
        cancel_requested INTEGER NOT NULL DEFAULT 0,
        resumed_count INTEGER NOT NULL DEFAULT 0,
        started_at INTEGER NOT NULL,
        finished_at INTEGER
      )`,
      'CREATE INDEX graph_runs_by_graph ON graph_runs (graph_id, started_at)',
      'CREATE INDEX graph_runs_by_start ON graph_runs (started_at)',
      'CREATE INDEX graph_runs_by_status ON graph_runs (status)',
      `CREATE TABLE graph_run_nodes (
        run_id TEXT NOT NULL,
        node_id TEXT NOT NULL,
        position INTEGER NOT NULL,
        status TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        started_at INTEGER,
        finished_at INTEGER,
        error TEXT,
        output_preview TEXT,
        output_chars INTEGER,
        PRIMARY KEY (run_id, node_id)
      )`,
    ],
  },
  {
    version: 2,
    name: 'graphs, saved graphs and runs may belong to a tenant',
    up: [
      'ALTER TABLE graph_definitions ADD COLUMN tenant TEXT',
      'ALTER TABLE graph_saved ADD COLUMN tenant TEXT',
      'ALTER TABLE graph_runs ADD COLUMN tenant TEXT',
    ],
  },
];

/** A row of graph_runs. */
export interface RunRow {
  run_id: string;
  graph_id: string;
  status: string;
  definition: string;
  node_count: number;
  inputs: string;
  concurrency: number;
  default_agent_id: string | null;
  cancel_requested: number;
  resumed_count: number;
  started_at: number;
  finished_at: number | null;
  tenant: string | null;
}

/** A row of graph_run_nodes. */
export interface NodeRow {
  node_id: string;
  position: number;
  status: string;
  attempts: number;
  started_at: number | null;
  finished_at: number | null;
  error: string | null;
  output_preview: string | null;
  output_chars: number | null;
}
