import { z } from 'zod';
import { MemoryStoreError } from '../errors.js';
import type { MemoryStore } from '../memory-store.js';
import type { StoreInput } from '../types.js';
import { AnnIndex } from './ann-index.js';
import { addVectors, type MemoryContext } from './context.js';
import { idSchema, parse, tagSchema } from './inputs.js';
import { chunks, errorKindOf, questionMarks } from './rows.js';
import { anchorOf, dateWords, resolveRelative } from './dates.js';
import { logChanges, logRange } from './changes.pg.js';
import { ftsStatements } from './fts.pg.js';
import { copyVectors } from './pgvector.pg.js';
import { transcriptLine } from './lexical.js';
import { nameClasses } from './names.js';
import { indexText } from './text.js';
import { toBlob } from './vectors.js';
import type { Dialect, SqlValue, Transaction } from '@agentd/storage';

// The write path: embedding (through the cache), batched inserts, observations, backfill.

/** Runs `task` after every write queued before it. */
export type WriteQueue = <T>(task: () => Promise<T>) => Promise<T>;

/** The entries' vectors, or undefined (logged) when the embedder fails: entries are then stored without. */
export async function embedForWrite(
  ctx: MemoryContext,
  contents: string[],
): Promise<Float32Array[] | undefined> {
  try {
    return await ctx.cache.embed(ctx.embedder, contents);
  } catch (error) {
    ctx.logger.warn(
      {
        err: error,
        step: 'extract',
        itemCount: contents.length,
        hint: 'entries are stored without vectors and found by full-text only until backfillEmbeddings() runs with a working embedder',
        errorKind: errorKindOf(error),
      },
      'memory embedder failed; storing without vectors',
    );
    return undefined;
  }
}

/** Inserts a batch of checked entries in one transaction and adds their vectors to the index. */
export async function writeBatch(ctx: MemoryContext, inputs: StoreInput[]): Promise<Array<{ id: string }>> {
  const extractBegan = performance.now();
  // The dates its relative expressions name ("yesterday" in a turn of 8 May 2023 is 7 May
  // 2023) are indexed with an entry's words, so a question naming the date finds it.
  const texts = inputs.map((input) => {
    const line = transcriptLine(input.content);
    const told = resolveRelative(line.text, anchorOf(line.date, input.createdAt ?? ctx.now()));
    // So are the WordNet classes of the names it holds ("Bach": composer), when enabled.
    const { nameClasses: classesOn, namePlaces } = ctx.settings.recall;
    const classes = classesOn ? nameClasses(line.text, namePlaces) : [];
    return indexText([input.content, ...told.map(dateWords), ...classes].join(' '));
  });
  const vectors = await embedForWrite(
    ctx,
    inputs.map((input) => input.content),
  );
  ctx.logger.debug(
    { step: 'extract', durationMs: performance.now() - extractBegan, itemCount: inputs.length },
    'memory entries prepared',
  );
  const storeBegan = performance.now();
  const rows = inputs.map((input, index) => ({
    id: ctx.randomId(),
    agentId: input.agentId ?? ctx.settings.defaultAgentId,
    tenant: input.tenant ?? ctx.settings.defaultTenant,
    input,
    text: texts[index]!,
    vector: vectors?.[index],
  }));
  const seqs = await ctx.db.transaction(async (tx) => {
    // seq is assigned here, under the write lock, so the entry and FTS rows go
    // out as a few multi-row statements in one round trip instead of two per entry.
    await lockSeqs(tx, ctx.db.dialect);
    const first = await firstSeq(tx, ctx.db.dialect, rows.length);
    const out = rows.map((_, index) => first + index);
    const statements: Array<{ sql: string; args: SqlValue[] }> = [];
    const fts = ftsStatements(ctx.db.dialect);
    for (const [offset, group] of chunks(rows, 100).entries()) {
      const base = first + offset * 100;
      const entryArgs: SqlValue[] = [];
      const ftsArgs: SqlValue[] = [];
      group.forEach((row, index) => {
        entryArgs.push(
          base + index,
          row.id,
          row.agentId,
          row.tenant,
          row.input.content,
          row.input.sessionKey ?? null,
          JSON.stringify([...new Set(row.input.tags ?? [])]),
          row.input.metadata === undefined ? null : JSON.stringify(row.input.metadata),
          row.input.trust ?? 'learned',
          row.input.createdAt ?? ctx.now(),
          row.vector === undefined ? null : toBlob(row.vector),
          row.vector === undefined ? null : ctx.embedder.model,
        );
        ftsArgs.push(base + index, row.text);
      });
      statements.push({
        sql: `INSERT INTO memory_entries (seq, id, agent_id, tenant, kind, content, session_key, tags, metadata,
                trust, created_at, embedding, embedding_model)
              VALUES ${group.map(() => "(?, ?, ?, ?, 'memory', ?, ?, ?, ?, ?, ?, ?, ?)").join(', ')}`,
        args: entryArgs,
      });
      statements.push({
        sql: `INSERT INTO memory_fts (rowid, body) VALUES ${group.map(() => fts.insertTuple).join(', ')}`,
        args: ftsArgs,
      });
    }
    await tx.batch(statements);
    if (ctx.db.dialect === 'pg') await logRange(tx, ctx.bus, first, first + rows.length - 1);
    if (ctx.pgvector !== undefined && vectors !== undefined) {
      await copyVectors(
        tx,
        rows.map((row, index) => ({ seq: first + index, vector: row.vector! })),
      );
    }
    return out;
  });
  ctx.logger.info(
    { step: 'store', durationMs: performance.now() - storeBegan, itemCount: rows.length },
    'memory entries stored',
  );
  if (ctx.index !== undefined && vectors !== undefined) {
    const byScope = new Map<string, { seqs: number[]; vectors: Float32Array[] }>();
    rows.forEach((row, index) => {
      const key = AnnIndex.scopeKey(row.agentId, row.tenant);
      const group = byScope.get(key) ?? { seqs: [], vectors: [] };
      group.seqs.push(seqs[index]!);
      group.vectors.push(row.vector!);
      byScope.set(key, group);
    });
    await addVectors(ctx.index, byScope);
  }
  return rows.map((row) => ({ id: row.id }));
}

/** Stores an observation linked to its sources (all in the agent and tenant scope). */
export async function consolidate(
  ctx: MemoryContext,
  enqueueWrite: WriteQueue,
  input: Parameters<MemoryStore['consolidate']>[0],
): Promise<{ id: string; sources: number }> {
  const request = parse(
    z
      .object({
        content: z.string().min(1).max(100_000),
        sourceIds: z.array(idSchema).min(1).max(1000),
        agentId: idSchema.optional(),
        tenant: idSchema.optional(),
        tags: z.array(tagSchema).max(32).optional(),
        metadata: z.record(z.string(), z.unknown()).optional(),
      })
      .strict(),
    input,
    'consolidation',
  );
  const agentId = request.agentId ?? ctx.settings.defaultAgentId;
  const tenant = request.tenant ?? ctx.settings.defaultTenant;
  const began = performance.now();
  const [vector] = (await embedForWrite(ctx, [request.content])) ?? [undefined];
  const id = ctx.randomId();
  const uniqueSources = [...new Set(request.sourceIds)];
  const seq = await enqueueWrite(() =>
    ctx.db.transaction(async (tx) => {
      const sources = await tx.query<{ seq: number; id: string; session_key: string | null }>(
        `SELECT seq, id, session_key FROM memory_entries
         WHERE agent_id = ? AND tenant = ? AND id IN (${questionMarks(uniqueSources.length)})`,
        [agentId, tenant, ...uniqueSources],
      );
      if (sources.length !== uniqueSources.length) {
        const found = new Set(sources.map((source) => source.id));
        const missing = uniqueSources.find((source) => !found.has(source))!;
        throw new MemoryStoreError('NOT_FOUND', `Memory entry not found: ${missing}`, {
          data: { id: missing },
        });
      }
      // seq is the next one after the highest, as SQLite gives a rowid (PostgreSQL: its sequence).
      await lockSeqs(tx, ctx.db.dialect);
      const next =
        ctx.db.dialect === 'pg'
          ? "nextval('memory_entry_seq')"
          : '(SELECT coalesce(max(seq), 0) + 1 FROM memory_entries)';
      const inserted = await tx.get<{ seq: number }>(
        `INSERT INTO memory_entries (seq, id, agent_id, tenant, kind, content, session_key, tags, metadata, trust,
           created_at, embedding, embedding_model)
         VALUES (${next}, ?, ?, ?, 'observation', ?, NULL, ?, ?,
           'learned', ?, ?, ?) RETURNING seq`,
        [
          id,
          agentId,
          tenant,
          request.content,
          JSON.stringify([...new Set(request.tags ?? [])]),
          request.metadata === undefined ? null : JSON.stringify(request.metadata),
          ctx.now(),
          vector === undefined ? null : toBlob(vector),
          vector === undefined ? null : ctx.embedder.model,
        ],
      );
      const observationSeq = Number(inserted!.seq);
      await tx.execute(
        `INSERT INTO memory_fts (rowid, body) VALUES ${ftsStatements(ctx.db.dialect).insertTuple}`,
        [observationSeq, indexText(request.content)],
      );
      const linkBegan = performance.now();
      for (const source of sources) {
        await tx.execute(
          'INSERT INTO memory_links (observation_seq, source_seq, source_session_key) VALUES (?, ?, ?)',
          [observationSeq, Number(source.seq), source.session_key],
        );
      }
      ctx.logger.debug(
        { step: 'link', durationMs: performance.now() - linkBegan, itemCount: sources.length },
        'observation linked to its sources',
      );
      if (ctx.db.dialect === 'pg') await logRange(tx, ctx.bus, observationSeq, observationSeq);
      if (ctx.pgvector !== undefined && vector !== undefined) {
        await copyVectors(tx, [{ seq: observationSeq, vector }]);
      }
      return observationSeq;
    }),
  );
  if (ctx.index !== undefined && vector !== undefined) {
    await addVectors(
      ctx.index,
      new Map([[AnnIndex.scopeKey(agentId, tenant), { seqs: [seq], vectors: [vector] }]]),
    );
  }
  ctx.logger.info(
    {
      step: 'consolidate',
      durationMs: performance.now() - began,
      itemCount: uniqueSources.length,
      agentId,
    },
    'observation consolidated',
  );
  ctx.events.emit('memory:consolidated', {
    agentId,
    observations: 1,
    sources: uniqueSources.length,
    timestamp: ctx.now(),
  });
  return { id, sources: uniqueSources.length };
}

/** Embeds entries stored without a vector of the current model; returns how many. */
export async function backfillEmbeddings(ctx: MemoryContext): Promise<number> {
  let done = 0;
  let after = 0;
  for (;;) {
    const rows = await ctx.db.query<{ seq: number; agent_id: string; tenant: string; content: string }>(
      `SELECT seq, agent_id, tenant, content FROM memory_entries
       WHERE seq > ? AND (embedding IS NULL OR embedding_model IS NULL OR embedding_model <> ?) ORDER BY seq LIMIT 128`,
      [after, ctx.embedder.model],
    );
    if (rows.length === 0) break;
    after = Number(rows[rows.length - 1]!.seq);
    const vectors = await ctx.cache.embed(
      ctx.embedder,
      rows.map((row) => row.content),
    );
    await ctx.db.transaction(async (tx) => {
      if (ctx.db.dialect === 'pg') {
        await lockSeqs(tx, 'pg');
        await logChanges(
          tx,
          ctx.bus,
          rows.map((row) => ({ seq: Number(row.seq), agent_id: row.agent_id, tenant: row.tenant })),
        );
      }
      if (ctx.pgvector !== undefined) {
        await copyVectors(
          tx,
          rows.map((row, index) => ({ seq: Number(row.seq), vector: vectors[index]! })),
        );
      }
      for (const [index, row] of rows.entries()) {
        await tx.execute('UPDATE memory_entries SET embedding = ?, embedding_model = ? WHERE seq = ?', [
          toBlob(vectors[index]!),
          ctx.embedder.model,
          row.seq,
        ]);
      }
    });
    if (ctx.index !== undefined) {
      rows.forEach((row, index) => {
        ctx.index!.add(AnnIndex.scopeKey(row.agent_id, row.tenant), [Number(row.seq)], [vectors[index]!]);
      });
    }
    done += rows.length;
  }
  if (done > 0) ctx.logger.info({ step: 'extract', itemCount: done }, 'memory embeddings backfilled');
  return done;
}

/**
 * On PostgreSQL, holds the entries table against other writers until the transaction ends, so
 * seqs and change-log ids are taken, and committed, in one order by every instance (libsql has
 * one writer at a time already).
 */
export async function lockSeqs(tx: Transaction, dialect: Dialect): Promise<void> {
  if (dialect === 'pg') await tx.execute('LOCK TABLE memory_entries IN SHARE ROW EXCLUSIVE MODE');
}

/**
 * The first of `count` new seqs, under {@link lockSeqs}: after the highest on libsql (as SQLite
 * gives a rowid), from a sequence on PostgreSQL, which never gives a deleted entry's seq again.
 */
async function firstSeq(tx: Transaction, dialect: Dialect, count: number): Promise<number> {
  if (dialect === 'pg') {
    const last = await tx.get<{ seq: number }>(
      "SELECT setval('memory_entry_seq', nextval('memory_entry_seq') + ? - 1) AS seq",
      [count],
    );
    return Number(last!.seq) - count + 1;
  }
  const top = await tx.get<{ seq: number }>('SELECT coalesce(max(seq), 0) AS seq FROM memory_entries');
  return Number(top?.seq ?? 0) + 1;
}
