/**
 * What the memory store reports about itself: `memory.stats` (and `memory.inspect` without
 * an id) and `memory.embeddingCache`. `@agentd/memory-store` produces these and
 * `@agentd/client` reads them off the wire, so both name this one declaration.
 */

/** Store statistics: the result of `memory.stats`, and of `memory.inspect` without an id. */
export interface MemoryStats {
  entries: number;
  memories: number;
  observations: number;
  agents: number;
  /** Entries whose vector is missing or from another model. */
  missingEmbeddings: number;
  bytes: {
    /** Database file size (page_count x page_size), null when the server does not say. */
    database: number | null;
    content: number;
    vectors: number;
  };
  index: {
    /** `quantized`: in-memory int8 SIMD scan; `hnsw`: usearch graph; `exact`: no in-process index, scans in libsql. */
    kind: 'quantized' | 'hnsw' | 'exact';
    /** False while the in-process index is being rebuilt from libsql (exact search answers meanwhile). */
    ready: boolean;
    size: number;
    scopes: number;
    dimensions: number;
    model: string;
    embedderKind: 'lexical' | 'semantic';
    rebuildMs: number | null;
    lastError: string | null;
  };
}

/** Counters of the embedding cache since the store opened: the result of `memory.embeddingCache`. */
export interface EmbeddingCacheStats {
  /** Vectors held in memory. */
  size: number;
  /** Most vectors the memory layer holds. */
  maxEntries: number;
  /** Vectors persisted in libsql. */
  persisted: number;
  /** Lookups answered from memory or from libsql. */
  hits: number;
  /** Of `hits`, those answered from libsql. */
  persistedHits: number;
  /** Lookups that had to call the embedder. */
  misses: number;
  /** Vectors dropped from memory (least recently used) or from libsql (oldest). */
  evictions: number;
  /** hits / (hits + misses), 0 before the first lookup. */
  hitRate: number;
}
