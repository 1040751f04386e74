import { MemoryStoreError } from '../errors.js';
import type { MemoryFilter, MemoryRecordDetail, MemoryStats } from '../types.js';
import type { MemoryContext } from './context.js';
import { browseInputSchema, parse } from './inputs.js';
import { type EntryRow, filterSql, RECORD_COLUMNS, toRecord } from './rows.js';

// Reading entries back: one with its links, pages newest first, a full export, and stats.

/** One entry with its observation links; rejects `NOT_FOUND`. */
export async function inspectEntry(ctx: MemoryContext, id: string): Promise<MemoryRecordDetail> {
  const row = await ctx.db.get<EntryRow>(`SELECT ${RECORD_COLUMNS} FROM memory_entries e WHERE e.id = :id`, {
    id,
    model: ctx.embedder.model,
  });
  if (row === undefined)
    throw new MemoryStoreError('NOT_FOUND', `Memory entry not found: ${id}`, { data: { id } });
  const sources = await ctx.db.query<{ id: string; session_key: string | null }>(
    `SELECT s.id, l.source_session_key AS session_key FROM memory_links l JOIN memory_entries s ON s.seq = l.source_seq
     WHERE l.observation_seq = ? ORDER BY s.seq`,
    [row.seq],
  );
  const derived = await ctx.db.query<{ id: string }>(
    `SELECT o.id FROM memory_links l JOIN memory_entries o ON o.seq = l.observation_seq
     WHERE l.source_seq = ? ORDER BY o.seq`,
    [row.seq],
  );
  return {
    ...toRecord(row),
    sources: sources.map((source) => ({ id: source.id, sessionKey: source.session_key })),
    derived: derived.map((item) => item.id),
  };
}

export async function browseEntries(
  ctx: MemoryContext,
  input: MemoryFilter & { offset?: number; limit?: number } = {},
) {
  const request = parse(browseInputSchema, input, 'memory browse');
  const offset = request.offset ?? 0;
  const limit = request.limit ?? 50;
  const filter = filterSql(request, ctx.db.dialect);
  const total = await ctx.db.get<{ count: number }>(
    `SELECT count(*) AS count FROM memory_entries e WHERE ${filter.where}`,
    filter.args,
  );
  const rows = await ctx.db.query<EntryRow>(
    `SELECT ${RECORD_COLUMNS} FROM memory_entries e WHERE ${filter.where}
     ORDER BY e.created_at DESC, e.seq DESC LIMIT :limit OFFSET :offset`,
    { ...filter.args, model: ctx.embedder.model, limit, offset },
  );
  return { entries: rows.map(toRecord), total: Number(total?.count ?? 0), offset, limit };
}

export async function exportEntries(ctx: MemoryContext, filter: MemoryFilter = {}) {
  const request = parse(browseInputSchema, filter, 'memory export');
  const where = filterSql(request, ctx.db.dialect);
  const rows = await ctx.db.query<EntryRow>(
    `SELECT ${RECORD_COLUMNS} FROM memory_entries e WHERE ${where.where} ORDER BY e.seq`,
    { ...where.args, model: ctx.embedder.model },
  );
  return { entries: rows.map(toRecord), count: rows.length };
}

/** Counts, sizes and the index state. */
export async function readStats(ctx: MemoryContext): Promise<MemoryStats> {
  const counts = await ctx.db.get<{
    entries: number;
    memories: number;
    observations: number;
    agents: number;
    missing: number;
    content: number;
    vectors: number;
  }>(
    `SELECT count(*) AS entries,
       coalesce(sum(CASE WHEN kind = 'memory' THEN 1 ELSE 0 END), 0) AS memories,
       coalesce(sum(CASE WHEN kind = 'observation' THEN 1 ELSE 0 END), 0) AS observations,
       count(DISTINCT agent_id) AS agents,
       coalesce(sum(CASE WHEN embedding IS NULL OR embedding_model IS NULL OR embedding_model <> ?
         THEN 1 ELSE 0 END), 0) AS missing,
       coalesce(sum(${ctx.db.dialect === 'pg' ? 'octet_length(content)' : 'length(CAST(content AS BLOB))'}), 0)
         AS content,
       coalesce(sum(length(embedding)), 0) AS vectors
     FROM memory_entries`,
    [ctx.embedder.model],
  );
  let database: number | null = null;
  try {
    if (ctx.db.dialect === 'pg') {
      // The memory tables only: the database is shared with every other package.
      const size = await ctx.db.get<{ bytes: number }>(
        `SELECT sum(pg_total_relation_size(CAST(name AS regclass))) AS bytes FROM (VALUES ('memory_entries'),
           ('memory_fts'), ('memory_links'), ('memory_embedding_cache')) AS t (name)`,
      );
      if (size !== undefined) database = Number(size.bytes);
    } else {
      const pages = await ctx.db.get<{ page_count: number }>('PRAGMA page_count');
      const size = await ctx.db.get<{ page_size: number }>('PRAGMA page_size');
      if (pages !== undefined && size !== undefined)
        database = Number(pages.page_count) * Number(size.page_size);
    }
  } catch {
    // Some servers refuse PRAGMA; the size is then unknown rather than wrong.
  }
  return {
    entries: Number(counts?.entries ?? 0),
    memories: Number(counts?.memories ?? 0),
    observations: Number(counts?.observations ?? 0),
    agents: Number(counts?.agents ?? 0),
    missingEmbeddings: Number(counts?.missing ?? 0),
    bytes: { database, content: Number(counts?.content ?? 0), vectors: Number(counts?.vectors ?? 0) },
    index: {
      kind: ctx.index === undefined ? 'exact' : ctx.settings.index.kind,
      ready: ctx.index === undefined ? true : ctx.indexReady,
      size: ctx.index?.size() ?? 0,
      scopes: ctx.index?.scopes().length ?? 0,
      dimensions: ctx.embedder.dimensions,
      model: ctx.embedder.model,
      embedderKind: ctx.embedder.kind,
      rebuildMs: ctx.rebuildMs === null ? null : Math.round(ctx.rebuildMs),
      lastError: ctx.indexError,
    },
  };
}
