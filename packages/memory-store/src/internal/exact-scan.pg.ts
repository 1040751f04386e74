import type { SqlValue } from '@agentd/storage';
import type { MemoryContext } from './context.js';
import { fromBlob } from './vectors.js';

const PAGE = 2000;

/**
 * The exact vector scan on PostgreSQL, where libsql's `vector_distance_cos` does not exist and
 * vectors are `bytea`: the filter's embedded entries are read in pages of seq order and their
 * cosine distances (1 − cos, as `vector_distance_cos` answers) computed here, keeping the
 * `limit` nearest. `where` and `args` are the filter's, on alias `e`.
 */
export async function exactScanPg(
  ctx: MemoryContext,
  query: Float32Array,
  where: string,
  args: Record<string, SqlValue>,
  limit: number,
): Promise<Array<{ seq: number; distance: number }>> {
  const queryNorm = Math.sqrt(dot(query, query));
  const best: Array<{ seq: number; distance: number }> = [];
  let after = 0;
  for (;;) {
    const rows = await ctx.db.query<{ seq: number; embedding: unknown }>(
      `SELECT e.seq, e.embedding FROM memory_entries e
       WHERE e.seq > :after AND e.embedding IS NOT NULL AND e.embedding_model = :model AND ${where}
       ORDER BY e.seq LIMIT :page`,
      { ...args, after, model: ctx.embedder.model, page: PAGE },
    );
    for (const row of rows) {
      const vector = fromBlob(row.embedding);
      if (vector === undefined || vector.length !== query.length) continue;
      const norms = queryNorm * Math.sqrt(dot(vector, vector));
      const distance = norms === 0 ? 1 : 1 - dot(query, vector) / norms;
      best.push({ seq: Number(row.seq), distance });
    }
    best.sort((a, b) => a.distance - b.distance || a.seq - b.seq);
    best.length = Math.min(best.length, limit);
    if (rows.length < PAGE) return best;
    after = Number(rows.at(-1)!.seq);
  }
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let index = 0; index < a.length; index += 1) sum += a[index]! * b[index]!;
  return sum;
}
