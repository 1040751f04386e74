import { createHash } from 'node:crypto';
import type { EmbeddingCacheStats } from '@agentd/contracts';
import type { Database } from '@agentd/storage';
import type { Embedder } from './embedder.js';
import { fromBlob, toBlob } from './internal/vectors.js';

/** Counters of the embedding cache; declared in `@agentd/contracts`, which the client shares. */
export type { EmbeddingCacheStats } from '@agentd/contracts';

/** SHA-256 of the text, hex; the cache key together with the model. */
export function contentHash(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * @internal An LRU of vectors in front of a libsql table keyed by (model, content
 * hash), in front of the embedder. A Map keeps insertion order, so re-inserting
 * on every hit makes its first key the least recently used. An embedder marked
 * `cacheable: false` passes straight through: nothing is looked up, kept or counted.
 */
export class EmbeddingCache {
  readonly #memory = new Map<string, Float32Array>();
  readonly #maxEntries: number;
  readonly #maxPersisted: number;
  readonly #db: Database;
  readonly #now: () => number;
  #hits = 0;
  #persistedHits = 0;
  #misses = 0;
  #evictions = 0;
  #writesSinceTrim = 0;

  constructor(db: Database, options: { maxEntries: number; maxPersisted: number; now: () => number }) {
    this.#db = db;
    this.#maxEntries = options.maxEntries;
    this.#maxPersisted = options.maxPersisted;
    this.#now = options.now;
  }

  /** Vectors for `texts` in order, calling the embedder once for every text not cached. */
  async embed(embedder: Embedder, texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    if (embedder.cacheable === false) return embedder.embed(texts, { signal });
    const out: Array<Float32Array | undefined> = new Array(texts.length);
    const hashes = texts.map(contentHash);
    const missing = new Map<string, number[]>();
    hashes.forEach((hash, index) => {
      const key = `${embedder.model}\u0000${hash}`;
      const cached = this.#memory.get(key);
      if (cached !== undefined) {
        this.#memory.delete(key);
        this.#memory.set(key, cached);
        out[index] = cached;
        this.#hits++;
        return;
      }
      const slots = missing.get(hash) ?? [];
      slots.push(index);
      missing.set(hash, slots);
    });
    if (missing.size > 0 && this.#maxPersisted > 0) {
      const wanted = [...missing.keys()];
      for (let start = 0; start < wanted.length; start += 200) {
        const chunk = wanted.slice(start, start + 200);
        const rows = await this.#db.query<{ content_hash: string; embedding: unknown }>(
          `SELECT content_hash, embedding FROM memory_embedding_cache WHERE model = ? AND content_hash IN (${chunk.map(() => '?').join(',')})`,
          [embedder.model, ...chunk],
        );
        for (const row of rows) {
          const vector = fromBlob(row.embedding);
          const slots = missing.get(row.content_hash);
          if (vector === undefined || vector.length !== embedder.dimensions || slots === undefined) continue;
          for (const slot of slots) out[slot] = vector;
          this.#remember(`${embedder.model}\u0000${row.content_hash}`, vector);
          this.#hits += slots.length;
          this.#persistedHits += slots.length;
          missing.delete(row.content_hash);
        }
      }
    }
    if (missing.size > 0) {
      const order = [...missing.keys()];
      const firstSlots = order.map((hash) => missing.get(hash)![0]!);
      const vectors = await embedder.embed(
        firstSlots.map((slot) => texts[slot]!),
        { signal },
      );
      const now = this.#now();
      const persist: Array<{ sql: string; args: Array<string | number | Uint8Array> }> = [];
      order.forEach((hash, position) => {
        const vector = vectors[position]!;
        const slots = missing.get(hash)!;
        for (const slot of slots) out[slot] = vector;
        this.#misses += slots.length;
        this.#remember(`${embedder.model}\u0000${hash}`, vector);
        persist.push({
          sql: `INSERT INTO memory_embedding_cache (model, content_hash, embedding, created_at) VALUES (?, ?, ?, ?)
            ON CONFLICT (model, content_hash) DO UPDATE SET embedding = excluded.embedding, created_at = excluded.created_at`,
          args: [embedder.model, hash, toBlob(vector), now],
        });
      });
      if (this.#maxPersisted > 0) {
        await this.#db.batch(persist);
        this.#writesSinceTrim += persist.length;
        // Trimming counts rows, so it runs now and then rather than on every write.
        if (this.#writesSinceTrim >= 256) await this.trim();
      }
    }
    return out as Float32Array[];
  }

  /** Deletes the oldest persisted vectors beyond the limit. */
  async trim(): Promise<void> {
    this.#writesSinceTrim = 0;
    const row = await this.#db.get<{ count: number }>('SELECT count(*) AS count FROM memory_embedding_cache');
    const excess = Number(row?.count ?? 0) - this.#maxPersisted;
    if (excess <= 0) return;
    const result = await this.#db.execute(
      `DELETE FROM memory_embedding_cache WHERE (model, content_hash) IN (
         SELECT model, content_hash FROM memory_embedding_cache ORDER BY created_at LIMIT ?)`,
      [excess],
    );
    this.#evictions += result.rowsAffected;
  }

  /** Drops every cached vector, in memory and persisted. */
  async clear(): Promise<void> {
    this.#memory.clear();
    await this.#db.execute('DELETE FROM memory_embedding_cache');
  }

  async stats(): Promise<EmbeddingCacheStats> {
    const row = await this.#db.get<{ count: number }>('SELECT count(*) AS count FROM memory_embedding_cache');
    const lookups = this.#hits + this.#misses;
    return {
      size: this.#memory.size,
      maxEntries: this.#maxEntries,
      persisted: Number(row?.count ?? 0),
      hits: this.#hits,
      persistedHits: this.#persistedHits,
      misses: this.#misses,
      evictions: this.#evictions,
      hitRate: lookups === 0 ? 0 : this.#hits / lookups,
    };
  }

  #remember(key: string, vector: Float32Array): void {
    if (this.#maxEntries === 0) return;
    this.#memory.delete(key);
    this.#memory.set(key, vector);
    while (this.#memory.size > this.#maxEntries) {
      const oldest = this.#memory.keys().next().value as string;
      this.#memory.delete(oldest);
      this.#evictions++;
    }
  }
}
