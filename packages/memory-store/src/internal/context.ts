import type { ClusterBus, Database } from '@agentd/storage';
import type { z } from 'zod';
import type { Embedder } from '../embedder.js';
import { EmbeddingCache } from '../embedding-cache.js';
import type { EventSink, MemoryLogger } from '../logger.js';
import type { memoryStoreSettingsSchema } from '../options.js';
import type { Reranker } from '../reranker.js';
import { AnnIndex, QuantizedIndex, type VectorIndex } from './ann-index.js';
import type { PgVector } from './pgvector.pg.js';
import { loadUsearch } from './usearch.js';
import { fromBlob } from './vectors.js';

/** The validated settings part of the store's options. */
export type Settings = z.output<typeof memoryStoreSettingsSchema>;

/**
 * What every part of the store shares: the database, the embedder and its
 * cache, the in-process index and its state, and the injected logger, events,
 * clock and ids. The write path, search, browse and removal modules take it
 * as their first argument.
 */
export interface MemoryContext {
  readonly db: Database;
  /** Carries change notices between instances on PostgreSQL; none on libsql or standalone. */
  readonly bus: ClusterBus | undefined;
  /** Replaced by `applyConfig`, like the reranker, settings, cache and index. */
  embedder: Embedder;
  reranker: Reranker | undefined;
  settings: Settings;
  readonly logger: MemoryLogger;
  readonly events: EventSink;
  readonly now: () => number;
  readonly randomId: () => string;
  cache: EmbeddingCache;
  /** Undefined when the index is disabled (vector recall is then exact) or pgvector answers. */
  index: VectorIndex | undefined;
  /** Set when the vectors live in pgvector too: the vector lane is a SQL query, no index here. */
  pgvector: PgVector | undefined;
  /** True once the background rebuild has loaded every stored vector. */
  indexReady: boolean;
  rebuildMs: number | null;
  indexError: string | null;
}

/** Builds the context, with an empty index of the configured kind. */
export function createMemoryContext(parts: {
  db: Database;
  bus: ClusterBus | undefined;
  embedder: Embedder;
  reranker: Reranker | undefined;
  settings: Settings;
  logger: MemoryLogger;
  events: EventSink;
  now: () => number;
  randomId: () => string;
  pgvector: PgVector | undefined;
}): MemoryContext {
  const { db, embedder, settings, now } = parts;
  return {
    ...parts,
    cache: new EmbeddingCache(db, { ...settings.cache, now }),
    index: parts.pgvector === undefined ? vectorIndexFor(settings.index, embedder.dimensions) : undefined,
    indexReady: false,
    rebuildMs: null,
    indexError: null,
  };
}

/** The in-process vector index the settings ask for; none when it is disabled. */
export function vectorIndexFor(settings: Settings['index'], dimensions: number): VectorIndex | undefined {
  if (!settings.enabled) return undefined;
  if (settings.kind === 'quantized') return new QuantizedIndex(dimensions);
  return new AnnIndex({
    dimensions,
    connectivity: settings.connectivity,
    expansionAdd: settings.expansionAdd,
    expansionSearch: settings.expansionSearch,
    quantization: settings.quantization,
  });
}

/**
 * Loads every stored vector of the current model into the index, page by
 * page; resolves (never rejects) once done or failed, recording the outcome
 * in the context.
 */
export function rebuildIndex(ctx: MemoryContext): Promise<void> {
  if (ctx.index === undefined) return Promise.resolve();
  const index = ctx.index;
  const began = performance.now();
  return (async () => {
    let after = 0;
    for (;;) {
      const rows = await ctx.db.query<{
        seq: number;
        agent_id: string;
        tenant: string;
        embedding: unknown;
      }>(
        `SELECT seq, agent_id, tenant, embedding FROM memory_entries
         WHERE seq > ? AND embedding IS NOT NULL AND embedding_model = ? ORDER BY seq LIMIT 2000`,
        [after, ctx.embedder.model],
      );
      if (rows.length === 0) break;
      const byScope = new Map<string, { seqs: number[]; vectors: Float32Array[] }>();
      for (const row of rows) {
        const vector = fromBlob(row.embedding);
        if (vector === undefined || vector.length !== ctx.embedder.dimensions) continue;
        const key = AnnIndex.scopeKey(row.agent_id, row.tenant);
        const group = byScope.get(key) ?? { seqs: [], vectors: [] };
        group.seqs.push(Number(row.seq));
        group.vectors.push(vector);
        byScope.set(key, group);
      }
      await addVectors(index, byScope);
      after = Number(rows[rows.length - 1]!.seq);
      // Yield between pages so recalls and writes keep flowing during a long rebuild.
      await new Promise((resolve) => setImmediate(resolve));
    }
    // A newer index (applyConfig) took over while this one was filled.
    if (ctx.index !== index) return;
    ctx.indexReady = true;
    ctx.rebuildMs = performance.now() - began;
    ctx.logger.info(
      { step: 'index', durationMs: Math.round(ctx.rebuildMs), itemCount: index.size() },
      'memory vector index rebuilt from libsql',
    );
  })().catch((error: unknown) => {
    ctx.indexError = error instanceof Error ? error.message : String(error);
    ctx.logger.warn(
      {
        err: error,
        hint: 'vector recall stays on exact search in libsql; check the memory tables',
        errorKind: 'internal',
      },
      'memory vector index rebuild failed',
    );
  });
}

/**
 * Adds vectors grouped by scope. usearch (a native addon of ~4 MB resident) loads here, on the
 * first vector the index holds, so a daemon whose memory has no vectors yet never loads it.
 */
export async function addVectors(
  index: VectorIndex,
  byScope: Map<string, { seqs: number[]; vectors: Float32Array[] }>,
): Promise<void> {
  if (byScope.size === 0) return;
  await loadUsearch();
  for (const [scope, group] of byScope) index.add(scope, group.seqs, group.vectors);
}
