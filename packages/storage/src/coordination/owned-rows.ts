import type { Database } from '../database.js';
import type { Queryable, SqlRow, SqlValue } from '../types.js';
import { identifier, nowMs } from './sql.js';
import type { CasDueSpec, Claimed, FencedWrite, OwnedRows, OwnedRowsSpec } from './types.js';

/** How the owned-row helpers reach the database; `sweepLock` serialises sweepers across instances. */
export interface OwnedRowsHost {
  db: Database;
  instanceId: string;
  leaseMs: number;
  /** Runs `sweep` holding the sweeper lock of `table`, or returns [] when another instance holds it. */
  underSweepLock(table: string, sweep: (tx: Queryable) => Promise<SqlValue[]>): Promise<SqlValue[]>;
}

function positiveInt(value: number | undefined, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  return Number.isSafeInteger(value) && value > 0 ? Math.min(value, max) : fallback;
}

/**
 * The owned-rows helpers on one table, the same SQL in both dialects except the claim's
 * `FOR UPDATE SKIP LOCKED` (PostgreSQL; SQLite already serialises writers) and the clock.
 */
export function createOwnedRows(host: OwnedRowsHost, spec: OwnedRowsSpec): OwnedRows {
  const { db, instanceId } = host;
  const table = identifier(spec.table, 'table');
  const id = identifier(spec.idColumn ?? 'id', 'id column');
  const leaseMs = positiveInt(spec.leaseMs, host.leaseMs, 86_400_000);
  const now = nowMs(db.dialect);
  const lock = db.dialect === 'pg' ? ' FOR UPDATE SKIP LOCKED' : '';
  const fenced = (write: FencedWrite | undefined, release: boolean) => {
    const sets = [write?.set, release ? 'owner = NULL, lease_until = NULL' : undefined].filter(
      (part): part is string => part !== undefined && part.trim() !== '',
    );
    return `UPDATE ${table} SET ${sets.join(', ')} WHERE ${id} = ? AND owner = ? AND fence = ?`;
  };

  return {
    async claim<Row = SqlRow>(options: Parameters<OwnedRows['claim']>[0] = {}) {
      const limit = positiveInt(options.limit, 1, 10_000);
      const where = options.where === undefined || options.where.trim() === '' ? 'TRUE' : options.where;
      const orderBy = options.orderBy ?? id;
      const sql =
        `UPDATE ${table} SET owner = ?, fence = fence + 1, lease_until = ${now} + ? ` +
        `WHERE ${id} IN (SELECT ${id} FROM ${table} WHERE (${where}) ` +
        `AND (owner IS NULL OR lease_until < ${now}) ORDER BY ${orderBy} LIMIT ?${lock}) RETURNING *`;
      const rows = await db.query<SqlRow>(sql, [instanceId, leaseMs, ...(options.args ?? []), limit]);
      return rows.map(
        (row): Claimed<Row> => ({ id: row[id] as SqlValue, fence: Number(row.fence), row: row as Row }),
      );
    },
    async renew(rowId, fence) {
      const result = await db.execute(
        `UPDATE ${table} SET lease_until = ${now} + ? WHERE ${id} = ? AND owner = ? AND fence = ?`,
        [leaseMs, rowId, instanceId, fence],
      );
      return result.rowsAffected === 1;
    },
    async write(rowId, fence, write, tx) {
      if (write.set === undefined || write.set.trim() === '') return this.renew(rowId, fence);
      const result = await (tx ?? db).execute(fenced(write, false), [
        ...(write.args ?? []),
        rowId,
        instanceId,
        fence,
      ]);
      return result.rowsAffected === 1;
    },
    async complete(rowId, fence, write, tx) {
      const result = await (tx ?? db).execute(fenced(write, true), [
        ...(write?.args ?? []),
        rowId,
        instanceId,
        fence,
      ]);
      return result.rowsAffected === 1;
    },
    sweep() {
      return host.underSweepLock(table, async (tx) => {
        const rows = await tx.query<SqlRow>(
          `UPDATE ${table} SET owner = NULL, lease_until = NULL ` +
            `WHERE owner IS NOT NULL AND lease_until < ${now} RETURNING ${id}`,
        );
        return rows.map((row) => row[id] as SqlValue);
      });
    },
  };
}

/**
 * The due-time compare-and-set, the same statement in both dialects: the UPDATE's WHERE is
 * re-checked on the newest row version after a concurrent writer commits (PostgreSQL's READ
 * COMMITTED) or runs alone (SQLite), so one caller per due time wins.
 */
export async function casDue(db: Database, spec: CasDueSpec): Promise<number | undefined> {
  const table = identifier(spec.table, 'table');
  const id = identifier(spec.idColumn ?? 'id', 'id column');
  const due = identifier(spec.dueColumn, 'due column');
  const guard = spec.where === undefined || spec.where.trim() === '' ? '' : ` AND (${spec.where})`;
  const row = await db.get<{ fence: number }>(
    `UPDATE ${table} SET ${due} = ?, fence = fence + 1 WHERE ${id} = ? AND ${due} = ?${guard} RETURNING fence`,
    [spec.next, spec.id, spec.due, ...(spec.args ?? [])],
  );
  return row === undefined ? undefined : Number(row.fence);
}
