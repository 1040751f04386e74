import type { SqlValue } from '@agentd/storage';
import { MemoryStoreError } from '../errors.js';
import type { MemoryEntry, RecallRecord, SearchInput, SearchResult } from '../types.js';
import { AnnIndex } from './ann-index.js';
import { exactScanPg } from './exact-scan.pg.js';
import { pgVectorScan } from './pgvector.pg.js';
import type { MemoryContext } from './context.js';
import { runFtsLane, selectiveMatch } from './fts-lane.js';
import { backfillFusion, convexFusion, type Lane, reciprocalRankFusion } from './fusion.js';
import { parse, searchInputSchema } from './inputs.js';
import { chunks, errorKindOf, filterSql, narrowsBelowScope, questionMarks } from './rows.js';
import { toBlob } from './vectors.js';

// Hybrid recall: a full-text lane (FTS5 bm25) and a vector lane (the in-process
// index, or an exact scan in libsql), fused, then optionally reranked.

/** Hybrid recall over the filter; emits `memory:recalled` with the recall record. */
export async function searchMemory(ctx: MemoryContext, input: SearchInput): Promise<SearchResult> {
  const request = parse(searchInputSchema, input, 'memory search') as SearchInput;
  const began = performance.now();
  const limit = request.limit ?? 10;
  const wanted = Math.max(ctx.settings.candidates, limit);
  const filter = filterSql(request, ctx.db.dialect);
  const record: RecallRecord = {
    lanes: [],
    ftsCandidates: 0,
    vectorCandidates: 0,
    finalCount: 0,
    exact: false,
    reranked: false,
    rerankFellBack: false,
    degraded: false,
    missingEmbeddings: 0,
    durationMs: 0,
  };

  let ftsLane: Lane = [];
  const lanes = new Set(request.lanes ?? ['fts', 'vector']);
  const match = lanes.has('fts') ? await selectiveMatch(ctx, request.query) : undefined;
  if (match !== undefined) {
    ftsLane = await runFtsLane(ctx, request.query, match, filter, wanted, record);
    record.lanes.push('fts');
  }
  record.ftsCandidates = ftsLane.length;

  let vectorLane: Lane = [];
  if (lanes.has('vector'))
    try {
      const [query] = await ctx.cache.embed(ctx.embedder, [request.query], request.signal);
      vectorLane = await runVectorLane(ctx, query!, request, filter, wanted, record);
      record.lanes.push('vector');
    } catch (error) {
      record.degraded = true;
      vectorLane = [];
      ctx.logger.warn(
        {
          err: error,
          agentId: request.agentId,
          hint: 'the vector index or the embedder is unavailable; recall continues on full-text only',
          errorKind: errorKindOf(error),
        },
        'memory recall degraded to full-text only',
      );
    }
  record.vectorCandidates = vectorLane.length;
  if (record.missingEmbeddings > 0) {
    ctx.logger.warn(
      {
        agentId: request.agentId,
        itemCount: record.missingEmbeddings,
        hint: 'these entries have no vector of the current model; run backfillEmbeddings() (the daemon does at start)',
        errorKind: 'dependency',
      },
      'memory recall candidates missing an embedding',
    );
  }

  const fused = fuse(ctx, ftsLane, vectorLane);
  let ranked = [...fused.entries()]
    .sort((a, b) => b[1] - a[1] || a[0] - b[0])
    .map(([seq, score]) => ({ seq, score }));

  const rows = await rowsFor(
    ctx,
    ranked.slice(0, Math.max(limit, ctx.reranker === undefined ? 0 : ctx.settings.rerankCandidates)),
  );
  if (ctx.reranker !== undefined && request.rerank !== false && ranked.length > 1) {
    ranked = await rerank(ctx, request.query, ranked, rows, record, request.agentId, limit);
  }
  const results: MemoryEntry[] = [];
  for (const candidate of ranked) {
    if (results.length >= limit) break;
    const row = rows.get(candidate.seq);
    if (row === undefined) continue;
    results.push({ id: row.id, content: row.content, score: candidate.score, timestamp: row.created_at });
  }
  record.finalCount = results.length;
  record.durationMs = performance.now() - began;
  ctx.events.emit('memory:recalled', {
    agentId: request.agentId ?? null,
    tenant: request.tenant ?? null,
    lanes: record.lanes,
    ftsCandidates: record.ftsCandidates,
    vectorCandidates: record.vectorCandidates,
    finalCount: record.finalCount,
    exact: record.exact,
    reranked: record.reranked,
    degraded: record.degraded,
    missingEmbeddings: record.missingEmbeddings,
    durationMs: Math.round(record.durationMs),
    timestamp: ctx.now(),
  });
  return { results, recall: record };
}

/**
 * Merges the lanes by the configured fusion. `auto`: the vector lane adds candidates after
 * the full-text lane's; with a semantic embedder and `vectorWeight` set, a convex combination.
 * Every weight tried for the test's concept model cost recall on the development set against
 * the lexical default (see the README's recall figures): reordering waits for a model measured
 * to earn it.
 */
function fuse(ctx: MemoryContext, ftsLane: Lane, vectorLane: Lane): Map<number, number> {
  const { fusion, rrfK, vectorWeight } = ctx.settings;
  if (fusion === 'rrf') return reciprocalRankFusion([ftsLane, vectorLane], rrfK);
  // `auto` without a vector weight: the vector lane only adds candidates after the full-text
  // lane's, whatever the embedder; a weight set for a measured model lets it reorder them too.
  if (fusion === 'auto' && (ctx.embedder.kind === 'lexical' || vectorWeight === undefined))
    return backfillFusion([ftsLane, vectorLane]);
  const weight = vectorWeight ?? 0.5;
  return convexFusion([ftsLane, vectorLane], [1 - weight, weight]);
}

async function runVectorLane(
  ctx: MemoryContext,
  query: Float32Array,
  request: SearchInput,
  filter: { where: string; args: Record<string, SqlValue> },
  wanted: number,
  record: RecallRecord,
): Promise<Lane> {
  const index = ctx.index;
  if (index !== undefined && ctx.indexReady) {
    const scopes =
      request.agentId !== undefined && request.tenant !== undefined
        ? [AnnIndex.scopeKey(request.agentId, request.tenant)]
        : index.scopes().filter((scope) => {
            const [agentId, tenant] = scope.split('\u0000');
            return (
              (request.agentId === undefined || agentId === request.agentId) &&
              (request.tenant === undefined || tenant === request.tenant)
            );
          });
    const narrow = narrowsBelowScope(request);
    // A filter the graph cannot see is applied after the search, so ask for more.
    const asked = narrow ? wanted * 8 : wanted;
    const hits = index.search(scopes, query, asked);
    if (!narrow) return similar(ctx, hits);
    const kept = new Set<number>();
    for (const group of chunks(hits, 500)) {
      const rows = await ctx.db.query<{ seq: number }>(
        `SELECT e.seq FROM memory_entries e WHERE e.seq IN (${group.map((_, i) => `:s${i}`).join(', ')}) AND ${filter.where}`,
        { ...filter.args, ...Object.fromEntries(group.map((hit, i) => [`s${i}`, hit.seq])) },
      );
      for (const row of rows) kept.add(Number(row.seq));
    }
    const survivors = hits.filter((hit) => kept.has(hit.seq)).slice(0, wanted);
    // Too few survivors while the graph had more to give: the filter is selective, so scan it exactly.
    if (survivors.length >= wanted || hits.length < asked) return similar(ctx, survivors);
  }
  if (ctx.pgvector !== undefined) {
    const hits = await pgVectorScan(ctx, ctx.pgvector, query, filter.where, filter.args, wanted);
    return similar(ctx, hits);
  }
  record.exact = true;
  const rows =
    ctx.db.dialect === 'pg'
      ? await exactScanPg(ctx, query, filter.where, filter.args, wanted)
      : await ctx.db.query<{ seq: number; distance: number }>(
          `SELECT e.seq, vector_distance_cos(e.embedding, :query) AS distance FROM memory_entries e
     WHERE e.embedding IS NOT NULL AND e.embedding_model = :model AND ${filter.where}
     ORDER BY distance LIMIT :limit`,
          { ...filter.args, query: toBlob(query), model: ctx.embedder.model, limit: wanted },
        );
  return similar(
    ctx,
    rows.map((row) => ({ seq: Number(row.seq), distance: Number(row.distance) })),
  );
}

// Nearest is not the same as related: a vector search always returns neighbours.
function similar(ctx: MemoryContext, hits: Array<{ seq: number; distance: number }>): Lane {
  const lane: Lane = [];
  for (const hit of hits) {
    const similarity = 1 - hit.distance;
    if (similarity >= ctx.settings.vectorMinSimilarity) lane.push({ seq: hit.seq, relevance: similarity });
  }
  return lane;
}

async function rowsFor(
  ctx: MemoryContext,
  candidates: Array<{ seq: number }>,
): Promise<Map<number, { id: string; content: string; created_at: number }>> {
  const out = new Map<number, { id: string; content: string; created_at: number }>();
  for (const group of chunks(candidates, 500)) {
    const rows = await ctx.db.query<{ seq: number; id: string; content: string; created_at: number }>(
      `SELECT seq, id, content, created_at FROM memory_entries WHERE seq IN (${questionMarks(group.length)})`,
      group.map((candidate) => candidate.seq),
    );
    for (const row of rows) {
      out.set(Number(row.seq), { id: row.id, content: row.content, created_at: Number(row.created_at) });
    }
  }
  return out;
}

async function rerank(
  ctx: MemoryContext,
  query: string,
  ranked: Array<{ seq: number; score: number }>,
  rows: Map<number, { content: string }>,
  record: RecallRecord,
  agentId: string | undefined,
  limit: number,
): Promise<Array<{ seq: number; score: number }>> {
  const reranker = ctx.reranker!;
  // Every returned result comes from the reranked head, so scores stay comparable.
  const head = ranked
    .slice(0, Math.max(limit, ctx.settings.rerankCandidates))
    .filter((candidate) => rows.has(candidate.seq));
  const began = performance.now();
  const controller = new AbortController();
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
      reject(
        new MemoryStoreError(
          'RERANKER_FAILED',
          `The reranker did not answer within ${ctx.settings.rerankTimeoutMs} ms`,
          {
            data: { reason: 'timeout' },
          },
        ),
      );
    }, ctx.settings.rerankTimeoutMs);
  });
  try {
    const scores = await Promise.race([
      reranker.rerank(
        query,
        head.map((candidate) => rows.get(candidate.seq)!.content),
        { signal: controller.signal, scores: head.map((candidate) => candidate.score) },
      ),
      timeout,
    ]);
    if (
      scores.length !== head.length ||
      scores.some((score) => typeof score !== 'number' || Number.isNaN(score))
    ) {
      throw new MemoryStoreError(
        'RERANKER_FAILED',
        'The reranker answered a score list of the wrong length',
        {
          data: { reason: 'protocol' },
        },
      );
    }
    const reordered = head
      .map((candidate, index) => ({ seq: candidate.seq, score: scores[index]! }))
      .sort((a, b) => b.score - a.score);
    record.reranked = true;
    ctx.events.emit('memory:reranked', {
      agentId: agentId ?? null,
      candidates: head.length,
      fellBack: false,
      timedOut: false,
      durationMs: Math.round(performance.now() - began),
      timestamp: ctx.now(),
    });
    return reordered;
  } catch (error) {
    record.rerankFellBack = true;
    ctx.logger.warn(
      {
        err: error,
        agentId,
        durationMs: performance.now() - began,
        hint: timedOut
          ? `the reranker took longer than rerankTimeoutMs (${ctx.settings.rerankTimeoutMs} ms); results keep the fused order`
          : 'the reranker is unavailable; results keep the fused order',
        errorKind: timedOut ? 'timeout' : errorKindOf(error),
      },
      'memory rerank fell back to fused order',
    );
    ctx.events.emit('memory:reranked', {
      agentId: agentId ?? null,
      candidates: head.length,
      fellBack: true,
      timedOut,
      durationMs: Math.round(performance.now() - began),
      timestamp: ctx.now(),
    });
    return ranked;
  } finally {
    clearTimeout(timer);
  }
}
