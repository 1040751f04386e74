import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { createHashingEmbedder, type Embedder } from './embedder.js';
import { EmbeddingCache, type EmbeddingCacheStats } from './embedding-cache.js';
import { MemoryStoreError } from './errors.js';
import { browseEntries, exportEntries, inspectEntry, readStats } from './internal/browse.js';
import { ChangeFollower } from './internal/changes.pg.js';
import { detectPgVector, preparePgVectorIndex } from './internal/pgvector.pg.js';
import { createMemoryContext, type MemoryContext, rebuildIndex, vectorIndexFor } from './internal/context.js';
import { parse, storeInputSchema } from './internal/inputs.js';
import { deleteBySession, deleteEntry, flushEntries } from './internal/removal.js';
import { searchMemory } from './internal/search.js';
import { backfillEmbeddings, consolidate, writeBatch } from './internal/write-path.js';
import { noopEventSink, noopLogger } from './logger.js';
import { MIGRATION_PACKAGE, memoryMigrationSet } from './migrations.js';
import { type MemoryStoreOptions, memoryStoreSettingsSchema } from './options.js';
import type {
  MemoryFilter,
  MemoryRecord,
  MemoryRecordDetail,
  MemoryStats,
  SearchInput,
  SearchResult,
  SessionDeleteResult,
  StoreInput,
} from './types.js';

/** Agent memory on libsql: full-text plus vectors, hybrid recall, observation links. */
export interface MemoryStore {
  /** The embedder's model and kind, for stats and the tool description. */
  readonly embedder: Embedder;
  /** True when a reranker is configured. */
  readonly hasReranker: boolean;
  /** Resolves once the in-process index holds every stored vector (exact search answers before). */
  ready(): Promise<void>;
  /** Stores one entry; concurrent calls share a transaction. Resolves with its id once committed. */
  store(input: StoreInput): Promise<{ id: string }>;
  /** Stores entries in one transaction: all of them or none. */
  storeMany(inputs: StoreInput[]): Promise<Array<{ id: string }>>;
  /** Hybrid recall: full-text and vector candidates fused, optionally reranked. */
  search(input: SearchInput): Promise<SearchResult>;
  /** One entry with its observation links; rejects `NOT_FOUND`. */
  inspect(id: string): Promise<MemoryRecordDetail>;
  /** Entries newest first. */
  browse(input?: MemoryFilter & { offset?: number; limit?: number }): Promise<{
    entries: MemoryRecord[];
    total: number;
    offset: number;
    limit: number;
  }>;
  /** Deletes one entry (unlinking it from observations); rejects `NOT_FOUND`. */
  delete(id: string): Promise<{ id: string; deleted: true; observationsDeleted: number }>;
  /** Deletes the memories of a source session by the contract's reset_conversation rules. */
  deleteBySession(input: {
    sessionKey: string;
    agentId?: string | undefined;
    tenant?: string | undefined;
    purgeDerived?: boolean | undefined;
  }): Promise<SessionDeleteResult>;
  /** Stores an observation consolidated from existing entries, linked to them and their sessions. */
  consolidate(input: {
    content: string;
    sourceIds: string[];
    agentId?: string | undefined;
    tenant?: string | undefined;
    tags?: string[] | undefined;
    metadata?: Record<string, unknown> | undefined;
  }): Promise<{ id: string; sources: number }>;
  /** Every entry matching the filter (no vectors). */
  export(filter?: MemoryFilter): Promise<{ entries: MemoryRecord[]; count: number }>;
  /** Deletes every entry, or every entry of one agent. */
  flush(input?: { agentId?: string | undefined }): Promise<{ flushed: number }>;
  stats(): Promise<MemoryStats>;
  embeddingCacheStats(): Promise<EmbeddingCacheStats>;
  /** Embeds entries stored without a vector (embedder down) or with another model's; returns how many. */
  backfillEmbeddings(): Promise<number>;
  /** Commits queued writes, waits for background work; the database stays open. Idempotent. */
  close(): Promise<void>;
  /**
   * Applies new settings in place, as {@link createMemoryStore} would take them (an absent
   * `embedder` or `reranker` means the default hashing embedder or none). Recall settings apply
   * to the next search; a new embedder model or dimension count, or changed index settings,
   * rebuild the in-process index from libsql in the background (exact search answers until then).
   * Entries holding another model's vectors are re-embedded by {@link MemoryStore.backfillEmbeddings}.
   * @throws {MemoryStoreError} `INVALID_INPUT` when the settings fail validation (nothing changes then).
   */
  applyConfig(settings: MemoryStoreSettings): void;
}

/** What {@link MemoryStore.applyConfig} takes: the store options without the injected parts. */
export type MemoryStoreSettings = Omit<
  MemoryStoreOptions,
  'database' | 'logger' | 'events' | 'now' | 'randomId'
>;

interface Pending {
  input: StoreInput;
  resolve: (value: { id: string }) => void;
  reject: (error: unknown) => void;
}

/**
 * Opens the memory store on `options.database`: applies the package's
 * migrations (a database from a newer build fails with the storage package's
 * `SCHEMA_TOO_NEW`), then rebuilds the in-process index from libsql in the
 * background; until it is ready, vector recall is an exact scan in libsql.
 */
export async function createMemoryStore(options: MemoryStoreOptions): Promise<MemoryStore> {
  const {
    database: db,
    bus,
    embedder = createHashingEmbedder(),
    reranker,
    logger = noopLogger,
    events = noopEventSink,
    now = Date.now,
    randomId = () => `mem_${randomUUID()}`,
    ...rest
  } = options;
  const settings = parse(memoryStoreSettingsSchema, rest, 'memory store options');
  await db.migrate(MIGRATION_PACKAGE, memoryMigrationSet);
  const pgvector = await detectPgVector(db, logger);
  const store = new LibsqlMemoryStore(
    createMemoryContext({ db, bus, embedder, reranker, settings, logger, events, now, randomId, pgvector }),
  );
  store.startRebuild();
  store.follow();
  return store;
}

/**
 * The store's public face: checks it is open, queues single writes into
 * shared transactions, and hands each call to its module under `internal/`.
 */
class LibsqlMemoryStore implements MemoryStore {
  readonly #ctx: MemoryContext;
  #rebuild: Promise<void> = Promise.resolve();
  #pending: Pending[] = [];
  #timer: NodeJS.Timeout | undefined;
  #writeChain: Promise<void> = Promise.resolve();
  #closing: Promise<void> | undefined;
  /** On PostgreSQL, keeps the in-process index in step with other instances' writes. */
  readonly #follower: ChangeFollower | undefined;

  constructor(ctx: MemoryContext) {
    this.#ctx = ctx;
    if (ctx.db.dialect === 'pg') {
      this.#follower = new ChangeFollower(ctx, () => {
        ctx.index = vectorIndexFor(ctx.settings.index, ctx.embedder.dimensions);
        ctx.indexReady = false;
        this.startRebuild();
      });
    }
  }

  get embedder(): Embedder {
    return this.#ctx.embedder;
  }

  get hasReranker(): boolean {
    return this.#ctx.reranker !== undefined;
  }

  applyConfig(options: MemoryStoreSettings): void {
    const ctx = this.#ctx;
    const { embedder = createHashingEmbedder(), reranker, ...rest } = options;
    const next = parse(memoryStoreSettingsSchema, rest, 'memory store settings');
    const reindex =
      embedder.model !== ctx.embedder.model ||
      embedder.dimensions !== ctx.embedder.dimensions ||
      JSON.stringify(next.index) !== JSON.stringify(ctx.settings.index);
    if (JSON.stringify(next.cache) !== JSON.stringify(ctx.settings.cache)) {
      ctx.cache = new EmbeddingCache(ctx.db, { ...next.cache, now: ctx.now });
    }
    ctx.embedder = embedder;
    ctx.reranker = reranker;
    ctx.settings = next;
    if (!reindex) return;
    ctx.index = ctx.pgvector === undefined ? vectorIndexFor(next.index, embedder.dimensions) : undefined;
    ctx.indexReady = false;
    ctx.indexError = null;
    this.startRebuild();
  }

  startRebuild(): void {
    if (this.#ctx.pgvector !== undefined) {
      this.#rebuild = preparePgVectorIndex(this.#ctx);
      return;
    }
    const follower = this.#follower;
    if (follower === undefined || this.#ctx.index === undefined) {
      this.#rebuild = rebuildIndex(this.#ctx);
      return;
    }
    // The log's end is read before the entries, so a change made meanwhile is applied after.
    this.#rebuild = follower.mark().then(
      () => rebuildIndex(this.#ctx),
      (error: unknown) => {
        this.#ctx.indexError = error instanceof Error ? error.message : String(error);
        this.#ctx.logger.warn(
          { err: error, errorKind: 'dependency', hint: 'vector recall stays on exact search' },
          'memory change log unreadable; index not rebuilt',
        );
      },
    );
  }

  /** Starts following other instances' changes once the first rebuild is done (PostgreSQL). */
  follow(): void {
    const follower = this.#follower;
    if (follower === undefined || this.#ctx.pgvector !== undefined) return;
    void this.#rebuild.then(() => {
      if (this.#closing === undefined) follower.start(this.#ctx.bus);
    });
  }

  ready(): Promise<void> {
    return this.#rebuild;
  }

  store(input: StoreInput): Promise<{ id: string }> {
    let checked: StoreInput;
    try {
      this.#checkOpen();
      checked = parse(storeInputSchema, input, 'memory entry') as StoreInput;
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise((resolve, reject) => {
      this.#pending.push({ input: checked, resolve, reject });
      if (this.#pending.length >= this.#ctx.settings.batch.maxBatch) this.#flushPending();
      else this.#timer ??= setTimeout(() => this.#flushPending(), this.#ctx.settings.batch.maxDelayMs);
    });
  }

  async storeMany(inputs: StoreInput[]): Promise<Array<{ id: string }>> {
    this.#checkOpen();
    const checked = parse(z.array(storeInputSchema).max(10_000), inputs, 'memory entries') as StoreInput[];
    if (checked.length === 0) return [];
    return this.#enqueueWrite(() => writeBatch(this.#ctx, checked));
  }

  #flushPending(): void {
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    const batch = this.#pending.splice(0, this.#ctx.settings.batch.maxBatch);
    if (batch.length === 0) return;
    if (this.#pending.length > 0) this.#timer = setTimeout(() => this.#flushPending(), 0);
    this.#enqueueWrite(() =>
      writeBatch(
        this.#ctx,
        batch.map((item) => item.input),
      ),
    ).then(
      (ids) => {
        for (const [index, item] of batch.entries()) item.resolve(ids[index]!);
      },
      (error: unknown) => {
        for (const item of batch) item.reject(error);
      },
    );
  }

  #enqueueWrite<T>(task: () => Promise<T>): Promise<T> {
    const result = this.#writeChain.then(task);
    this.#writeChain = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  async search(input: SearchInput): Promise<SearchResult> {
    this.#checkOpen();
    return searchMemory(this.#ctx, input);
  }

  async inspect(id: string): Promise<MemoryRecordDetail> {
    this.#checkOpen();
    return inspectEntry(this.#ctx, id);
  }

  async browse(input: MemoryFilter & { offset?: number; limit?: number } = {}) {
    this.#checkOpen();
    return browseEntries(this.#ctx, input);
  }

  async export(filter: MemoryFilter = {}) {
    this.#checkOpen();
    return exportEntries(this.#ctx, filter);
  }

  async delete(id: string) {
    this.#checkOpen();
    return deleteEntry(this.#ctx, this.#writeChain, id);
  }

  async deleteBySession(input: Parameters<MemoryStore['deleteBySession']>[0]): Promise<SessionDeleteResult> {
    this.#checkOpen();
    return deleteBySession(this.#ctx, this.#writeChain, input);
  }

  async consolidate(
    input: Parameters<MemoryStore['consolidate']>[0],
  ): Promise<{ id: string; sources: number }> {
    this.#checkOpen();
    return consolidate(this.#ctx, (task) => this.#enqueueWrite(task), input);
  }

  async flush(input: { agentId?: string | undefined } = {}): Promise<{ flushed: number }> {
    this.#checkOpen();
    return flushEntries(this.#ctx, this.#writeChain, input);
  }

  async stats(): Promise<MemoryStats> {
    this.#checkOpen();
    return readStats(this.#ctx);
  }

  embeddingCacheStats(): Promise<EmbeddingCacheStats> {
    return this.#ctx.cache.stats();
  }

  async backfillEmbeddings(): Promise<number> {
    this.#checkOpen();
    return backfillEmbeddings(this.#ctx);
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      while (this.#pending.length > 0) this.#flushPending();
      await this.#writeChain;
      await this.#rebuild;
      this.#follower?.stop();
      this.#ctx.index?.clear();
    })();
    return this.#closing;
  }

  #checkOpen(): void {
    if (this.#closing !== undefined) throw new MemoryStoreError('CLOSED', 'The memory store is closed');
  }
}
