import { createHash } from 'node:crypto';
import type { Database, SqlValue, Transaction } from '@agentd/storage';
import type { MemoryLogger } from '../logger.js';
import type { MemoryContext } from './context.js';
import { chunks } from './rows.js';
import { fromBlob } from './vectors.js';

// pgvector, when the server has it: the vectors are copied into `embedding_vec` (type `vector`,
// no fixed length, beside the `bytea` column the rest of the store reads), and each embedder
// model gets a partial HNSW index over `embedding_vec::vector(d)` (pgvector's way to index a
// column holding several lengths). The vector lane is then one SQL query on every instance,
// with no in-process index to keep in step.

/** What the store knows of the server's pgvector once it is enabled. */
export interface PgVector {
  /** pgvector 0.8 and later: a filtered HNSW scan goes on until it has enough rows. */
  iterative: boolean;
}

/** HNSW indexes `vector` columns of at most this many dimensions. */
const HNSW_MAX_DIMENSIONS = 2000;
const PAGE = 500;

/**
 * Enables pgvector when the server offers it: answers undefined (vectors stay `bytea`, with the
 * per-instance index) when it is not available or `CREATE EXTENSION` is refused (logged).
 */
export async function detectPgVector(db: Database, logger: MemoryLogger): Promise<PgVector | undefined> {
  if (db.dialect !== 'pg') return undefined;
  try {
    let installed = await db.get<{ version: string }>(
      "SELECT extversion AS version FROM pg_extension WHERE extname = 'vector'",
    );
    if (installed === undefined) {
      const available = await db.get("SELECT 1 AS ok FROM pg_available_extensions WHERE name = 'vector'");
      if (available === undefined) return undefined;
      await db.execute('CREATE EXTENSION IF NOT EXISTS vector');
      installed = await db.get<{ version: string }>(
        "SELECT extversion AS version FROM pg_extension WHERE extname = 'vector'",
      );
    }
    if (installed === undefined) return undefined;
    await db.transaction(async (tx) => {
      await tx.execute("SELECT pg_advisory_xact_lock(hashtext('agentd:memory-pgvector'))");
      await tx.execute('ALTER TABLE memory_entries ADD COLUMN IF NOT EXISTS embedding_vec vector');
    });
    const [major = 0, minor = 0] = installed.version.split('.').map(Number);
    return { iterative: major > 0 || minor >= 8 };
  } catch (error) {
    logger.info(
      {
        err: error,
        hint: 'install pgvector and grant CREATE on the database to let vector recall run in PostgreSQL',
      },
      'pgvector not enabled; vectors stay bytea with a vector index per instance',
    );
    return undefined;
  }
}

/** `'…'` for SQL, quotes doubled (the model name goes into the partial index's predicate). */
function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/** pgvector's text form of a vector. */
export function vectorText(vector: Float32Array): string {
  return `[${Array.from(vector).join(',')}]`;
}

/**
 * Creates the current model's HNSW index (once, under an advisory lock, as peers may start
 * together) and copies into `embedding_vec` the vectors stored before pgvector was there.
 * Resolves, never rejects: a failure is recorded and the lane scans exactly in SQL.
 */
export async function preparePgVectorIndex(ctx: MemoryContext): Promise<void> {
  const { model, dimensions } = ctx.embedder;
  try {
    if (dimensions <= HNSW_MAX_DIMENSIONS) {
      const name = `memory_entries_hnsw_${createHash('sha256').update(`${model}\u0000${dimensions}`).digest('hex').slice(0, 16)}`;
      await ctx.db.transaction(async (tx) => {
        await tx.execute("SELECT pg_advisory_xact_lock(hashtext('agentd:memory-pgvector'))");
        await tx.execute(
          `CREATE INDEX IF NOT EXISTS ${name} ON memory_entries
           USING hnsw ((embedding_vec::vector(${dimensions})) vector_cosine_ops)
           WHERE embedding_model = ${literal(model)}`,
        );
      });
    }
    for (;;) {
      const rows = await ctx.db.query<{ seq: number; embedding: unknown }>(
        `SELECT seq, embedding FROM memory_entries
         WHERE embedding IS NOT NULL AND embedding_vec IS NULL ORDER BY seq LIMIT ${PAGE}`,
      );
      if (rows.length === 0) break;
      await ctx.db.transaction(async (tx) => {
        await copyVectors(
          tx,
          rows.flatMap((row) => {
            const vector = fromBlob(row.embedding);
            return vector === undefined ? [] : [{ seq: Number(row.seq), vector }];
          }),
        );
      });
      if (rows.length < PAGE) break;
    }
    ctx.indexReady = true;
  } catch (error) {
    ctx.indexError = error instanceof Error ? error.message : String(error);
    ctx.logger.warn(
      { err: error, errorKind: 'dependency', hint: 'vector recall scans exactly in PostgreSQL meanwhile' },
      'pgvector index not prepared',
    );
  }
}

/** Sets `embedding_vec` of the entries given, inside `tx`. */
export async function copyVectors(
  tx: Transaction,
  rows: Array<{ seq: number; vector: Float32Array }>,
): Promise<void> {
  for (const group of chunks(rows, 100)) {
    await tx.execute(
      `UPDATE memory_entries SET embedding_vec = CAST(v.vec AS vector)
       FROM (VALUES ${group.map(() => '(CAST(? AS BIGINT), ?)').join(', ')}) AS v (seq, vec)
       WHERE memory_entries.seq = v.seq`,
      group.flatMap((row) => [row.seq, vectorText(row.vector)]),
    );
  }
}

/**
 * The vector lane in PostgreSQL: the `limit` nearest entries of the current model passing the
 * filter, by cosine distance, through the model's HNSW index (iterative on pgvector 0.8+, so a
 * selective filter still gets its rows). `where`/`args` are the filter's, on alias `e`.
 */
export async function pgVectorScan(
  ctx: MemoryContext,
  pgvector: PgVector,
  query: Float32Array,
  where: string,
  args: Record<string, SqlValue>,
  limit: number,
): Promise<Array<{ seq: number; distance: number }>> {
  const d = ctx.embedder.dimensions;
  const distance = `(e.embedding_vec::vector(${d})) <=> CAST(:query AS vector(${d}))`;
  const sql = `SELECT e.seq, ${distance} AS distance FROM memory_entries e
     WHERE e.embedding_model = ${literal(ctx.embedder.model)} AND e.embedding_vec IS NOT NULL AND ${where}
     ORDER BY ${distance} LIMIT :limit`;
  const params = { ...args, query: vectorText(query), limit };
  return ctx.db.transaction(async (tx) => {
    await tx.execute(`SET LOCAL hnsw.ef_search = ${Math.min(1000, Math.max(40, limit))}`);
    if (pgvector.iterative) await tx.execute("SET LOCAL hnsw.iterative_scan = 'relaxed_order'");
    const rows = await tx.query<{ seq: number; distance: number }>(sql, params);
    // relaxed_order may return near ties out of order.
    return rows
      .map((row) => ({ seq: Number(row.seq), distance: Number(row.distance) }))
      .sort((a, b) => a.distance - b.distance || a.seq - b.seq);
  });
}
