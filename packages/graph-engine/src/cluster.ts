import type { GraphQueryable, GraphSqlValue } from './database.js';

/** A fenced write as the owned-row helpers take it: SQL after `SET` and its arguments. */
export interface GraphFencedWrite {
  set?: string | undefined;
  args?: GraphSqlValue[] | undefined;
}

/**
 * The owned-row helpers of one table, as `@agentd/storage`'s coordinator gives them
 * (`coordinator.ownedRows({ table, idColumn, leaseMs })`): claims with `FOR UPDATE SKIP LOCKED`
 * and a lease, and writes applied only while this instance still owns the row at its fence.
 */
export interface GraphOwnedRows {
  claim(options?: {
    where?: string | undefined;
    args?: GraphSqlValue[] | undefined;
    orderBy?: string | undefined;
    limit?: number | undefined;
  }): Promise<Array<{ id: unknown; fence: number; row: unknown }>>;
  renew(id: GraphSqlValue, fence: number): Promise<boolean>;
  write(id: GraphSqlValue, fence: number, write: GraphFencedWrite, tx?: GraphQueryable): Promise<boolean>;
  complete(id: GraphSqlValue, fence: number, write?: GraphFencedWrite, tx?: GraphQueryable): Promise<boolean>;
}

/**
 * The part of `@agentd/storage`'s `Coordinator` the graph service uses, declared here so the
 * package does not depend on storage. In `postgres` mode runs are owned by the instance
 * executing them (a lease it renews, a fence on every write), node outputs live in a table, and
 * a cancel asked on another instance reaches the owner through a row flag and a bus notice. In
 * `single` mode (libsql) everything stays in this process as it always has.
 */
export interface GraphCoordinator {
  readonly mode: 'single' | 'postgres';
  readonly instanceId: string;
  ownedRows(spec: { table: string; idColumn?: string; leaseMs?: number | undefined }): GraphOwnedRows;
  readonly bus: {
    publish(topic: string, payload: unknown): Promise<void>;
    watch(topic: string, check: () => Promise<void> | void): () => void;
  };
}

/** The bus topic of run control: a cancel asked on one instance for a run another executes. */
export const GRAPH_TOPIC = 'graph.runs';
