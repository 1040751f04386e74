import { randomUUID } from 'node:crypto';
import type { Database, SqlValue, Transaction } from '@agentd/storage';
import { z } from 'zod';
import { createHashingEmbedder, type Embedder } from './embedder.js';
import { EmbeddingCache, type EmbeddingCacheStats } from './embedding-cache.js';
import { isMemoryStoreError, MemoryStoreError } from './errors.js';
import { AnnIndex, QuantizedIndex, type VectorIndex } from './internal/ann-index.js';
import { convexFusion, type Lane, reciprocalRankFusion } from './internal/fusion.js';
import { indexText, orExpression, queryTerms } from './internal/text.js';
import { fromBlob, toBlob } from './internal/vectors.js';
import {
  type EventSink,
  type MemoryErrorKind,
  type MemoryLogger,
  noopEventSink,
  noopLogger,
} from './logger.js';
import { MIGRATION_PACKAGE, memoryMigrations } from './migrations.js';
import { type MemoryStoreOptions, memoryStoreSettingsSchema } from './options.js';
import type { Reranker } from './reranker.js';
import type {
  MemoryEntry,
  MemoryFilter,
  MemoryRecord,
  MemoryRecordDetail,
  MemoryStats,
  RecallRecord,
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

const tagSchema = z.string().min(1).max(64);
const idSchema = z.string().min(1).max(128);
const storeInputSchema = z
  .object({
    content: z.string().min(1).max(100_000),
    agentId: idSchema.optional(),
    tenant: idSchema.optional(),
    sessionKey: z.string().min(1).max(512).optional(),
    tags: z.array(tagSchema).max(32).optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
    trust: z.enum(['system', 'learned', 'external']).optional(),
    createdAt: z.number().int().min(0).optional(),
  })
  .strict();
const filterShape = {
  agentId: idSchema.optional(),
  tenant: idSchema.optional(),
  tags: z.array(tagSchema).max(32).optional(),
  sinceMs: z.number().int().min(0).optional(),
  untilMs: z.number().int().min(0).optional(),
  sessionKey: z.string().min(1).max(512).optional(),
  kind: z.enum(['memory', 'observation']).optional(),
};
const searchInputSchema = z
  .object({
    ...filterShape,
    query: z.string().min(1).max(10_000),
    limit: z.number().int().min(1).max(100).optional(),
    rerank: z.boolean().optional(),
    lanes: z
      .array(z.enum(['fts', 'vector']))
      .min(1)
      .optional(),
    signal: z.instanceof(AbortSignal).optional(),
  })
  .strict();
const browseInputSchema = z
  .object({
    ...filterShape,
    offset: z.number().int().min(0).optional(),
    limit: z.number().int().min(1).max(1000).optional(),
  })
  .strict();

/** The in-process vector index the settings ask for; none when it is disabled. */
function vectorIndexFor(settings: Settings['index'], dimensions: number): VectorIndex | undefined {
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

function parse<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const detail = parsed.error.issues
      .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
      .join('; ');
    throw new MemoryStoreError('INVALID_INPUT', `Invalid ${what}: ${detail}`, {
      data: { issues: parsed.error.issues },
    });
  }
  return parsed.data;
}

interface EntryRow {
  seq: number;
  id: string;
  agent_id: string;
  tenant: string;
  kind: 'memory' | 'observation';
  content: string;
  session_key: string | null;
  tags: string;
  metadata: string | null;
  trust: 'system' | 'learned' | 'external';
  created_at: number;
  embedded: number;
}

const RECORD_COLUMNS = `e.seq, e.id, e.agent_id, e.tenant, e.kind, e.content, e.session_key, e.tags, e.metadata,
  e.trust, e.created_at, (e.embedding IS NOT NULL AND e.embedding_model = :model) AS embedded`;

function toRecord(row: EntryRow): MemoryRecord {
  return {
    id: row.id,
    agentId: row.agent_id,
    tenant: row.tenant,
    kind: row.kind,
    content: row.content,
    sessionKey: row.session_key,
    tags: JSON.parse(row.tags) as string[],
    metadata: row.metadata === null ? null : (JSON.parse(row.metadata) as Record<string, unknown>),
    trust: row.trust,
    createdAt: Number(row.created_at),
    embedded: Number(row.embedded) === 1,
  };
}

/** SQL conditions on alias `e` with named arguments. */
function filterSql(filter: MemoryFilter): { where: string; args: Record<string, SqlValue> } {
  const clauses: string[] = [];
  const args: Record<string, SqlValue> = {};
  if (filter.agentId !== undefined) {
    clauses.push('e.agent_id = :agentId');
    args.agentId = filter.agentId;
  }
  if (filter.tenant !== undefined) {
    clauses.push('e.tenant = :tenant');
    args.tenant = filter.tenant;
  }
  if (filter.sessionKey !== undefined) {
    clauses.push('e.session_key = :sessionKey');
    args.sessionKey = filter.sessionKey;
  }
  if (filter.kind !== undefined) {
    clauses.push('e.kind = :kind');
    args.kind = filter.kind;
  }
  if (filter.sinceMs !== undefined) {
    clauses.push('e.created_at >= :sinceMs');
    args.sinceMs = filter.sinceMs;
  }
  if (filter.untilMs !== undefined) {
    clauses.push('e.created_at < :untilMs');
    args.untilMs = filter.untilMs;
  }
  const tags = [...new Set(filter.tags ?? [])];
  if (tags.length > 0) {
    const names = tags.map((tag, index) => {
      args[`tag${index}`] = tag;
      return `:tag${index}`;
    });
    clauses.push(
      `(SELECT count(DISTINCT value) FROM json_each(e.tags) WHERE value IN (${names.join(', ')})) = ${tags.length}`,
    );
  }
  return { where: clauses.length === 0 ? '1' : clauses.join(' AND '), args };
}

/** True when the filter narrows below an agent and tenant scope (the index cannot apply it). */
function narrowsBelowScope(filter: MemoryFilter): boolean {
  return (
    (filter.tags?.length ?? 0) > 0 ||
    filter.sinceMs !== undefined ||
    filter.untilMs !== undefined ||
    filter.sessionKey !== undefined ||
    filter.kind !== undefined
  );
}

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let start = 0; start < items.length; start += size) out.push(items.slice(start, start + size));
  return out;
}

function questionMarks(count: number): string {
  return new Array(count).fill('?').join(', ');
}

/** errorKind for an embedder or reranker failure, from the error's recorded reason. */
function errorKindOf(error: unknown): MemoryErrorKind {
  if (isMemoryStoreError(error)) {
    const reason = error.data?.reason;
    if (reason === 'timeout') return 'timeout';
    if (reason === 'network') return 'network';
    if (reason === 'auth') return 'auth';
    if (error.code === 'DIMENSIONS_MISMATCH' || error.code === 'INVALID_OPTIONS') return 'config';
    return 'dependency';
  }
  return 'internal';
}

interface Pending {
  input: StoreInput;
  resolve: (value: { id: string }) => void;
  reject: (error: unknown) => void;
}

interface ScopedSeq {
  seq: number;
  agent_id: string;
  tenant: string;
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
    embedder = createHashingEmbedder(),
    reranker,
    logger = noopLogger,
    events = noopEventSink,
    now = Date.now,
    randomId = () => `mem_${randomUUID()}`,
    ...rest
  } = options;
  const settings = parse(memoryStoreSettingsSchema, rest, 'memory store options');
  await db.migrate(MIGRATION_PACKAGE, memoryMigrations);
  const store = new LibsqlMemoryStore(db, embedder, reranker, settings, logger, events, now, randomId);
  store.startRebuild();
  return store;
}

type Settings = z.output<typeof memoryStoreSettingsSchema>;

class LibsqlMemoryStore implements MemoryStore {
  embedder: Embedder;
  hasReranker: boolean;
  readonly #db: Database;
  #reranker: Reranker | undefined;
  #settings: Settings;
  readonly #logger: MemoryLogger;
  readonly #events: EventSink;
  readonly #now: () => number;
  readonly #randomId: () => string;
  #cache: EmbeddingCache;
  #index: VectorIndex | undefined;
  #indexReady = false;
  #rebuild: Promise<void> = Promise.resolve();
  #rebuildMs: number | null = null;
  #indexError: string | null = null;
  #pending: Pending[] = [];
  #timer: NodeJS.Timeout | undefined;
  #writeChain: Promise<void> = Promise.resolve();
  #closing: Promise<void> | undefined;

  constructor(
    db: Database,
    embedder: Embedder,
    reranker: Reranker | undefined,
    settings: Settings,
    logger: MemoryLogger,
    events: EventSink,
    now: () => number,
    randomId: () => string,
  ) {
    this.#db = db;
    this.embedder = embedder;
    this.#reranker = reranker;
    this.hasReranker = reranker !== undefined;
    this.#settings = settings;
    this.#logger = logger;
    this.#events = events;
    this.#now = now;
    this.#randomId = randomId;
    this.#cache = new EmbeddingCache(db, { ...settings.cache, now });
    this.#index = vectorIndexFor(settings.index, embedder.dimensions);
  }

  applyConfig(options: MemoryStoreSettings): void {
    const { embedder = createHashingEmbedder(), reranker, ...rest } = options;
    const next = parse(memoryStoreSettingsSchema, rest, 'memory store settings');
    const reindex =
      embedder.model !== this.embedder.model ||
      embedder.dimensions !== this.embedder.dimensions ||
      JSON.stringify(next.index) !== JSON.stringify(this.#settings.index);
    if (JSON.stringify(next.cache) !== JSON.stringify(this.#settings.cache)) {
      this.#cache = new EmbeddingCache(this.#db, { ...next.cache, now: this.#now });
    }
    this.embedder = embedder;
    this.#reranker = reranker;
    this.hasReranker = reranker !== undefined;
    this.#settings = next;
    if (!reindex) return;
    this.#index = vectorIndexFor(next.index, embedder.dimensions);
    this.#indexReady = false;
    this.#indexError = null;
    this.startRebuild();
  }

  startRebuild(): void {
    if (this.#index === undefined) return;
    const index = this.#index;
    const began = performance.now();
    this.#rebuild = (async () => {
      let after = 0;
      for (;;) {
        const rows = await this.#db.query<{
          seq: number;
          agent_id: string;
          tenant: string;
          embedding: unknown;
        }>(
          `SELECT seq, agent_id, tenant, embedding FROM memory_entries
           WHERE seq > ? AND embedding IS NOT NULL AND embedding_model = ? ORDER BY seq LIMIT 2000`,
          [after, this.embedder.model],
        );
        if (rows.length === 0) break;
        const byScope = new Map<string, { seqs: number[]; vectors: Float32Array[] }>();
        for (const row of rows) {
          const vector = fromBlob(row.embedding);
          if (vector === undefined || vector.length !== this.embedder.dimensions) continue;
          const key = AnnIndex.scopeKey(row.agent_id, row.tenant);
          const group = byScope.get(key) ?? { seqs: [], vectors: [] };
          group.seqs.push(Number(row.seq));
          group.vectors.push(vector);
          byScope.set(key, group);
        }
        for (const [scope, group] of byScope) index.add(scope, group.seqs, group.vectors);
        after = Number(rows[rows.length - 1]!.seq);
        // Yield between pages so recalls and writes keep flowing during a long rebuild.
        await new Promise((resolve) => setImmediate(resolve));
      }
      // A newer index (applyConfig) took over while this one was filled.
      if (this.#index !== index) return;
      this.#indexReady = true;
      this.#rebuildMs = performance.now() - began;
      this.#logger.info(
        { step: 'index', durationMs: Math.round(this.#rebuildMs), itemCount: index.size() },
        'memory vector index rebuilt from libsql',
      );
    })().catch((error: unknown) => {
      this.#indexError = error instanceof Error ? error.message : String(error);
      this.#logger.warn(
        {
          err: error,
          hint: 'vector recall stays on exact search in libsql; check the memory tables',
          errorKind: 'internal',
        },
        'memory vector index rebuild failed',
      );
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
      if (this.#pending.length >= this.#settings.batch.maxBatch) this.#flushPending();
      else this.#timer ??= setTimeout(() => this.#flushPending(), this.#settings.batch.maxDelayMs);
    });
  }

  async storeMany(inputs: StoreInput[]): Promise<Array<{ id: string }>> {
    this.#checkOpen();
    const checked = parse(z.array(storeInputSchema).max(10_000), inputs, 'memory entries') as StoreInput[];
    if (checked.length === 0) return [];
    return this.#enqueueWrite(() => this.#writeBatch(checked));
  }

  #flushPending(): void {
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    const batch = this.#pending.splice(0, this.#settings.batch.maxBatch);
    if (batch.length === 0) return;
    if (this.#pending.length > 0) this.#timer = setTimeout(() => this.#flushPending(), 0);
    this.#enqueueWrite(() => this.#writeBatch(batch.map((item) => item.input))).then(
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

  async #embedForWrite(contents: string[]): Promise<Float32Array[] | undefined> {
    try {
      return await this.#cache.embed(this.embedder, contents);
    } catch (error) {
      this.#logger.warn(
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

  async #writeBatch(inputs: StoreInput[]): Promise<Array<{ id: string }>> {
    const extractBegan = performance.now();
    const texts = inputs.map((input) => indexText(input.content));
    const vectors = await this.#embedForWrite(inputs.map((input) => input.content));
    this.#logger.debug(
      { step: 'extract', durationMs: performance.now() - extractBegan, itemCount: inputs.length },
      'memory entries prepared',
    );
    const storeBegan = performance.now();
    const rows = inputs.map((input, index) => ({
      id: this.#randomId(),
      agentId: input.agentId ?? this.#settings.defaultAgentId,
      tenant: input.tenant ?? this.#settings.defaultTenant,
      input,
      text: texts[index]!,
      vector: vectors?.[index],
    }));
    const seqs = await this.#db.transaction(async (tx) => {
      // seq is assigned here, under the write lock, so the entry and FTS rows go
      // out as a few multi-row statements in one round trip instead of two per entry.
      const top = await tx.get<{ seq: number }>('SELECT coalesce(max(seq), 0) AS seq FROM memory_entries');
      const first = Number(top?.seq ?? 0) + 1;
      const out = rows.map((_, index) => first + index);
      const statements: Array<{ sql: string; args: SqlValue[] }> = [];
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
            row.input.createdAt ?? this.#now(),
            row.vector === undefined ? null : toBlob(row.vector),
            row.vector === undefined ? null : this.embedder.model,
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
          sql: `INSERT INTO memory_fts (rowid, body) VALUES ${group.map(() => '(?, ?)').join(', ')}`,
          args: ftsArgs,
        });
      }
      await tx.batch(statements);
      return out;
    });
    this.#logger.info(
      { step: 'store', durationMs: performance.now() - storeBegan, itemCount: rows.length },
      'memory entries stored',
    );
    if (this.#index !== undefined && vectors !== undefined) {
      const byScope = new Map<string, { seqs: number[]; vectors: Float32Array[] }>();
      rows.forEach((row, index) => {
        const key = AnnIndex.scopeKey(row.agentId, row.tenant);
        const group = byScope.get(key) ?? { seqs: [], vectors: [] };
        group.seqs.push(seqs[index]!);
        group.vectors.push(row.vector!);
        byScope.set(key, group);
      });
      for (const [scope, group] of byScope) this.#index.add(scope, group.seqs, group.vectors);
    }
    return rows.map((row) => ({ id: row.id }));
  }

  async search(input: SearchInput): Promise<SearchResult> {
    this.#checkOpen();
    const request = parse(searchInputSchema, input, 'memory search') as SearchInput;
    const began = performance.now();
    const limit = request.limit ?? 10;
    const wanted = Math.max(this.#settings.candidates, limit);
    const filter = filterSql(request);
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
    const match = lanes.has('fts') ? await this.#selectiveMatch(request.query) : undefined;
    if (match !== undefined) {
      ftsLane = await this.#ftsLane(match, filter, wanted, record);
      record.lanes.push('fts');
    }
    record.ftsCandidates = ftsLane.length;

    let vectorLane: Lane = [];
    if (lanes.has('vector'))
      try {
        const [query] = await this.#cache.embed(this.embedder, [request.query], request.signal);
        vectorLane = await this.#vectorLane(query!, request, filter, wanted, record);
        record.lanes.push('vector');
      } catch (error) {
        record.degraded = true;
        vectorLane = [];
        this.#logger.warn(
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
      this.#logger.warn(
        {
          agentId: request.agentId,
          itemCount: record.missingEmbeddings,
          hint: 'these entries have no vector of the current model; run backfillEmbeddings() (the daemon does at start)',
          errorKind: 'dependency',
        },
        'memory recall candidates missing an embedding',
      );
    }

    const fused =
      this.#settings.fusion === 'rrf'
        ? reciprocalRankFusion([ftsLane, vectorLane], this.#settings.rrfK)
        : convexFusion([ftsLane, vectorLane], [1 - this.#settings.vectorWeight, this.#settings.vectorWeight]);
    let ranked = [...fused.entries()]
      .sort((a, b) => b[1] - a[1] || a[0] - b[0])
      .map(([seq, score]) => ({ seq, score }));

    const rows = await this.#rowsFor(
      ranked.slice(0, Math.max(limit, this.#reranker === undefined ? 0 : this.#settings.rerankCandidates)),
    );
    if (this.#reranker !== undefined && request.rerank !== false && ranked.length > 1) {
      ranked = await this.#rerank(request.query, ranked, rows, record, request.agentId, limit);
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
    this.#events.emit('memory:recalled', {
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
      timestamp: this.#now(),
    });
    return { results, recall: record };
  }

  /**
   * The query's words as an OR match, without words found in more than a
   * tenth of all entries while rarer ones exist: such words barely move bm25
   * (their idf is near zero) but make FTS5 score most of the table.
   */
  async #selectiveMatch(query: string): Promise<string | undefined> {
    const terms = queryTerms(query);
    if (terms.length <= 1) return orExpression(terms);
    const total = await this.#db.get<{ n: number }>('SELECT max(seq) AS n FROM memory_entries');
    const ceiling = Math.max(1000, Number(total?.n ?? 0) / 10);
    const counts = await this.#db.query<{ term: string; n: number }>(
      terms
        .map(() => 'SELECT ? AS term, (SELECT count(*) FROM memory_fts WHERE memory_fts MATCH ?) AS n')
        .join(' UNION ALL '),
      terms.flatMap((term) => [term, term]),
    );
    const selective = counts
      .filter((row) => Number(row.n) > 0 && Number(row.n) <= ceiling)
      .map((row) => row.term);
    return orExpression(selective.length > 0 ? selective : terms);
  }

  async #ftsLane(
    match: string,
    filter: { where: string; args: Record<string, SqlValue> },
    wanted: number,
    record: RecallRecord,
  ): Promise<Lane> {
    // Ranking inside FTS5 alone, then the filter on the few winners, is several
    // times faster than joining every match to its entry; a selective filter
    // that leaves too few winners gets the joined query.
    const asked = wanted * 4;
    const ranked = await this.#db.query<{ seq: number; relevance: number }>(
      'SELECT rowid AS seq, -bm25(memory_fts) AS relevance FROM memory_fts WHERE memory_fts MATCH ? ORDER BY bm25(memory_fts) LIMIT ?',
      [match, asked],
    );
    const kept = new Map<number, boolean>();
    for (const group of chunks(ranked, 500)) {
      const rows = await this.#db.query<{ seq: number; missing: number }>(
        `SELECT e.seq, (e.embedding IS NULL OR e.embedding_model IS NOT :model) AS missing FROM memory_entries e
         WHERE e.seq IN (${group.map((_, i) => `:s${i}`).join(', ')}) AND ${filter.where}`,
        {
          ...filter.args,
          model: this.embedder.model,
          ...Object.fromEntries(group.map((row, i) => [`s${i}`, Number(row.seq)])),
        },
      );
      for (const row of rows) kept.set(Number(row.seq), Number(row.missing) === 1);
    }
    let lane = ranked
      .filter((row) => kept.has(Number(row.seq)))
      .slice(0, wanted)
      .map((row) => ({ seq: Number(row.seq), relevance: Number(row.relevance) }));
    if (lane.length < wanted && ranked.length === asked) {
      const rows = await this.#db.query<{ seq: number; relevance: number; missing: number }>(
        `SELECT e.seq, -bm25(memory_fts) AS relevance,
           (e.embedding IS NULL OR e.embedding_model IS NOT :model) AS missing
         FROM memory_fts JOIN memory_entries e ON e.seq = memory_fts.rowid
         WHERE memory_fts MATCH :match AND ${filter.where}
         ORDER BY bm25(memory_fts) LIMIT :limit`,
        { ...filter.args, match, model: this.embedder.model, limit: wanted },
      );
      lane = rows.map((row) => ({ seq: Number(row.seq), relevance: Number(row.relevance) }));
      for (const row of rows) kept.set(Number(row.seq), Number(row.missing) === 1);
    }
    record.missingEmbeddings = lane.filter((candidate) => kept.get(candidate.seq) === true).length;
    return lane;
  }

  async #vectorLane(
    query: Float32Array,
    request: SearchInput,
    filter: { where: string; args: Record<string, SqlValue> },
    wanted: number,
    record: RecallRecord,
  ): Promise<Lane> {
    const index = this.#index;
    if (index !== undefined && this.#indexReady) {
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
      if (!narrow) return this.#similar(hits);
      const kept = new Set<number>();
      for (const group of chunks(hits, 500)) {
        const rows = await this.#db.query<{ seq: number }>(
          `SELECT e.seq FROM memory_entries e WHERE e.seq IN (${group.map((_, i) => `:s${i}`).join(', ')}) AND ${filter.where}`,
          { ...filter.args, ...Object.fromEntries(group.map((hit, i) => [`s${i}`, hit.seq])) },
        );
        for (const row of rows) kept.add(Number(row.seq));
      }
      const survivors = hits.filter((hit) => kept.has(hit.seq)).slice(0, wanted);
      // Too few survivors while the graph had more to give: the filter is selective, so scan it exactly.
      if (survivors.length >= wanted || hits.length < asked) return this.#similar(survivors);
    }
    record.exact = true;
    const rows = await this.#db.query<{ seq: number; distance: number }>(
      `SELECT e.seq, vector_distance_cos(e.embedding, :query) AS distance FROM memory_entries e
       WHERE e.embedding IS NOT NULL AND e.embedding_model = :model AND ${filter.where}
       ORDER BY distance LIMIT :limit`,
      { ...filter.args, query: toBlob(query), model: this.embedder.model, limit: wanted },
    );
    return this.#similar(rows.map((row) => ({ seq: Number(row.seq), distance: Number(row.distance) })));
  }

  // Nearest is not the same as related: a vector search always returns neighbours.
  #similar(hits: Array<{ seq: number; distance: number }>): Lane {
    const lane: Lane = [];
    for (const hit of hits) {
      const similarity = 1 - hit.distance;
      if (similarity >= this.#settings.vectorMinSimilarity)
        lane.push({ seq: hit.seq, relevance: similarity });
    }
    return lane;
  }

  async #rowsFor(
    candidates: Array<{ seq: number }>,
  ): Promise<Map<number, { id: string; content: string; created_at: number }>> {
    const out = new Map<number, { id: string; content: string; created_at: number }>();
    for (const group of chunks(candidates, 500)) {
      const rows = await this.#db.query<{ seq: number; id: string; content: string; created_at: number }>(
        `SELECT seq, id, content, created_at FROM memory_entries WHERE seq IN (${questionMarks(group.length)})`,
        group.map((candidate) => candidate.seq),
      );
      for (const row of rows) {
        out.set(Number(row.seq), { id: row.id, content: row.content, created_at: Number(row.created_at) });
      }
    }
    return out;
  }

  async #rerank(
    query: string,
    ranked: Array<{ seq: number; score: number }>,
    rows: Map<number, { content: string }>,
    record: RecallRecord,
    agentId: string | undefined,
    limit: number,
  ): Promise<Array<{ seq: number; score: number }>> {
    const reranker = this.#reranker!;
    // Every returned result comes from the reranked head, so scores stay comparable.
    const head = ranked
      .slice(0, Math.max(limit, this.#settings.rerankCandidates))
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
            `The reranker did not answer within ${this.#settings.rerankTimeoutMs} ms`,
            {
              data: { reason: 'timeout' },
            },
          ),
        );
      }, this.#settings.rerankTimeoutMs);
    });
    try {
      const scores = await Promise.race([
        reranker.rerank(
          query,
          head.map((candidate) => rows.get(candidate.seq)!.content),
          { signal: controller.signal },
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
      this.#events.emit('memory:reranked', {
        agentId: agentId ?? null,
        candidates: head.length,
        fellBack: false,
        timedOut: false,
        durationMs: Math.round(performance.now() - began),
        timestamp: this.#now(),
      });
      return reordered;
    } catch (error) {
      record.rerankFellBack = true;
      this.#logger.warn(
        {
          err: error,
          agentId,
          durationMs: performance.now() - began,
          hint: timedOut
            ? `the reranker took longer than rerankTimeoutMs (${this.#settings.rerankTimeoutMs} ms); results keep the fused order`
            : 'the reranker is unavailable; results keep the fused order',
          errorKind: timedOut ? 'timeout' : errorKindOf(error),
        },
        'memory rerank fell back to fused order',
      );
      this.#events.emit('memory:reranked', {
        agentId: agentId ?? null,
        candidates: head.length,
        fellBack: true,
        timedOut,
        durationMs: Math.round(performance.now() - began),
        timestamp: this.#now(),
      });
      return ranked;
    } finally {
      clearTimeout(timer);
    }
  }

  async inspect(id: string): Promise<MemoryRecordDetail> {
    this.#checkOpen();
    const row = await this.#db.get<EntryRow>(
      `SELECT ${RECORD_COLUMNS} FROM memory_entries e WHERE e.id = :id`,
      {
        id,
        model: this.embedder.model,
      },
    );
    if (row === undefined)
      throw new MemoryStoreError('NOT_FOUND', `Memory entry not found: ${id}`, { data: { id } });
    const sources = await this.#db.query<{ id: string; session_key: string | null }>(
      `SELECT s.id, l.source_session_key AS session_key FROM memory_links l JOIN memory_entries s ON s.seq = l.source_seq
       WHERE l.observation_seq = ? ORDER BY s.seq`,
      [row.seq],
    );
    const derived = await this.#db.query<{ id: string }>(
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

  async browse(input: MemoryFilter & { offset?: number; limit?: number } = {}) {
    this.#checkOpen();
    const request = parse(browseInputSchema, input, 'memory browse');
    const offset = request.offset ?? 0;
    const limit = request.limit ?? 50;
    const filter = filterSql(request);
    const total = await this.#db.get<{ count: number }>(
      `SELECT count(*) AS count FROM memory_entries e WHERE ${filter.where}`,
      filter.args,
    );
    const rows = await this.#db.query<EntryRow>(
      `SELECT ${RECORD_COLUMNS} FROM memory_entries e WHERE ${filter.where}
       ORDER BY e.created_at DESC, e.seq DESC LIMIT :limit OFFSET :offset`,
      { ...filter.args, model: this.embedder.model, limit, offset },
    );
    return { entries: rows.map(toRecord), total: Number(total?.count ?? 0), offset, limit };
  }

  async export(filter: MemoryFilter = {}) {
    this.#checkOpen();
    const request = parse(browseInputSchema, filter, 'memory export');
    const where = filterSql(request);
    const rows = await this.#db.query<EntryRow>(
      `SELECT ${RECORD_COLUMNS} FROM memory_entries e WHERE ${where.where} ORDER BY e.seq`,
      { ...where.args, model: this.embedder.model },
    );
    return { entries: rows.map(toRecord), count: rows.length };
  }

  /** Deletes entries with their FTS rows and links, inside `tx`. */
  async #deleteRows(tx: Transaction, rows: ScopedSeq[]): Promise<void> {
    for (const group of chunks(rows, 500)) {
      const seqs = group.map((row) => row.seq);
      const marks = questionMarks(seqs.length);
      await tx.execute(`DELETE FROM memory_fts WHERE rowid IN (${marks})`, seqs);
      await tx.execute(`DELETE FROM memory_links WHERE observation_seq IN (${marks})`, seqs);
      await tx.execute(`DELETE FROM memory_links WHERE source_seq IN (${marks})`, seqs);
      await tx.execute(`DELETE FROM memory_entries WHERE seq IN (${marks})`, seqs);
    }
  }

  #unindex(rows: ScopedSeq[]): void {
    if (this.#index === undefined) return;
    const byScope = new Map<string, number[]>();
    for (const row of rows) {
      const key = AnnIndex.scopeKey(row.agent_id, row.tenant);
      byScope.set(key, [...(byScope.get(key) ?? []), Number(row.seq)]);
    }
    for (const [scope, seqs] of byScope) this.#index.remove(scope, seqs);
  }

  /**
   * Removes `sources`, unlinks them from observations, and deletes the
   * observations left without any source (or, with `purgeDerived`, every
   * observation derived from them).
   */
  async #removeSources(
    tx: Transaction,
    sources: ScopedSeq[],
    sessionKey: string | undefined,
    purgeDerived: boolean,
  ): Promise<{ removed: ScopedSeq[]; observationsDeleted: number; observationsUnlinked: number }> {
    const sourceSeqs = sources.map((row) => row.seq);
    const affected = new Set<number>();
    for (const group of chunks(sourceSeqs, 500)) {
      const rows = await tx.query<{ observation_seq: number }>(
        `SELECT DISTINCT observation_seq FROM memory_links WHERE source_seq IN (${questionMarks(group.length)})`,
        group,
      );
      for (const row of rows) affected.add(Number(row.observation_seq));
    }
    if (sessionKey !== undefined) {
      const rows = await tx.query<{ observation_seq: number }>(
        'SELECT DISTINCT observation_seq FROM memory_links WHERE source_session_key = ?',
        [sessionKey],
      );
      for (const row of rows) affected.add(Number(row.observation_seq));
    }
    for (const seq of sourceSeqs) affected.delete(seq);
    const observations = await this.#scoped(tx, [...affected]);
    let doomed: ScopedSeq[];
    if (purgeDerived) {
      doomed = observations;
    } else {
      for (const group of chunks(sourceSeqs, 500)) {
        await tx.execute(
          `DELETE FROM memory_links WHERE source_seq IN (${questionMarks(group.length)})`,
          group,
        );
      }
      if (sessionKey !== undefined) {
        await tx.execute('DELETE FROM memory_links WHERE source_session_key = ?', [sessionKey]);
      }
      doomed = [];
      for (const observation of observations) {
        const left = await tx.get<{ count: number }>(
          'SELECT count(*) AS count FROM memory_links WHERE observation_seq = ?',
          [observation.seq],
        );
        if (Number(left?.count ?? 0) === 0) doomed.push(observation);
      }
    }
    const removed = [...sources, ...doomed];
    await this.#deleteRows(tx, removed);
    return {
      removed,
      observationsDeleted: doomed.length,
      observationsUnlinked: observations.length - doomed.length,
    };
  }

  async #scoped(tx: Transaction, seqs: number[]): Promise<ScopedSeq[]> {
    const out: ScopedSeq[] = [];
    for (const group of chunks(seqs, 500)) {
      const rows = await tx.query<ScopedSeq>(
        `SELECT seq, agent_id, tenant FROM memory_entries WHERE seq IN (${questionMarks(group.length)})`,
        group,
      );
      out.push(...rows.map((row) => ({ ...row, seq: Number(row.seq) })));
    }
    return out;
  }

  async delete(id: string) {
    this.#checkOpen();
    await this.#writeChain;
    const outcome = await this.#db.transaction(async (tx) => {
      const row = await tx.get<ScopedSeq>('SELECT seq, agent_id, tenant FROM memory_entries WHERE id = ?', [
        id,
      ]);
      if (row === undefined) return undefined;
      return this.#removeSources(tx, [{ ...row, seq: Number(row.seq) }], undefined, false);
    });
    if (outcome === undefined) {
      throw new MemoryStoreError('NOT_FOUND', `Memory entry not found: ${id}`, { data: { id } });
    }
    this.#unindex(outcome.removed);
    return { id, deleted: true as const, observationsDeleted: outcome.observationsDeleted };
  }

  async deleteBySession(input: {
    sessionKey: string;
    agentId?: string | undefined;
    tenant?: string | undefined;
    purgeDerived?: boolean | undefined;
  }): Promise<SessionDeleteResult> {
    this.#checkOpen();
    const request = parse(
      z
        .object({
          sessionKey: z.string().min(1).max(512),
          agentId: idSchema.optional(),
          tenant: idSchema.optional(),
          purgeDerived: z.boolean().optional(),
        })
        .strict(),
      input,
      'session memory deletion',
    );
    await this.#writeChain;
    const began = performance.now();
    const filter = filterSql({
      agentId: request.agentId,
      tenant: request.tenant,
      sessionKey: request.sessionKey,
    });
    const outcome = await this.#db.transaction(async (tx) => {
      const sources = await tx.query<ScopedSeq>(
        `SELECT e.seq, e.agent_id, e.tenant FROM memory_entries e WHERE ${filter.where}`,
        filter.args,
      );
      const result = await this.#removeSources(
        tx,
        sources.map((row) => ({ ...row, seq: Number(row.seq) })),
        request.sessionKey,
        request.purgeDerived ?? false,
      );
      return { ...result, memoriesDeleted: sources.length };
    });
    this.#unindex(outcome.removed);
    this.#logger.info(
      {
        step: 'link',
        durationMs: performance.now() - began,
        itemCount: outcome.memoriesDeleted,
        reason: 'session_reset',
      },
      'memories of a session deleted',
    );
    return {
      memoriesDeleted: outcome.memoriesDeleted,
      observationsDeleted: outcome.observationsDeleted,
      observationsUnlinked: outcome.observationsUnlinked,
    };
  }

  async consolidate(input: {
    content: string;
    sourceIds: string[];
    agentId?: string | undefined;
    tenant?: string | undefined;
    tags?: string[] | undefined;
    metadata?: Record<string, unknown> | undefined;
  }): Promise<{ id: string; sources: number }> {
    this.#checkOpen();
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
    const agentId = request.agentId ?? this.#settings.defaultAgentId;
    const tenant = request.tenant ?? this.#settings.defaultTenant;
    const began = performance.now();
    const [vector] = (await this.#embedForWrite([request.content])) ?? [undefined];
    const id = this.#randomId();
    const uniqueSources = [...new Set(request.sourceIds)];
    const seq = await this.#enqueueWrite(() =>
      this.#db.transaction(async (tx) => {
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
        const inserted = await tx.get<{ seq: number }>(
          `INSERT INTO memory_entries (id, agent_id, tenant, kind, content, session_key, tags, metadata, trust,
             created_at, embedding, embedding_model)
           VALUES (?, ?, ?, 'observation', ?, NULL, ?, ?, 'learned', ?, ?, ?) RETURNING seq`,
          [
            id,
            agentId,
            tenant,
            request.content,
            JSON.stringify([...new Set(request.tags ?? [])]),
            request.metadata === undefined ? null : JSON.stringify(request.metadata),
            this.#now(),
            vector === undefined ? null : toBlob(vector),
            vector === undefined ? null : this.embedder.model,
          ],
        );
        const observationSeq = Number(inserted!.seq);
        await tx.execute('INSERT INTO memory_fts (rowid, body) VALUES (?, ?)', [
          observationSeq,
          indexText(request.content),
        ]);
        const linkBegan = performance.now();
        for (const source of sources) {
          await tx.execute(
            'INSERT INTO memory_links (observation_seq, source_seq, source_session_key) VALUES (?, ?, ?)',
            [observationSeq, Number(source.seq), source.session_key],
          );
        }
        this.#logger.debug(
          { step: 'link', durationMs: performance.now() - linkBegan, itemCount: sources.length },
          'observation linked to its sources',
        );
        return observationSeq;
      }),
    );
    if (this.#index !== undefined && vector !== undefined) {
      this.#index.add(AnnIndex.scopeKey(agentId, tenant), [seq], [vector]);
    }
    this.#logger.info(
      {
        step: 'consolidate',
        durationMs: performance.now() - began,
        itemCount: uniqueSources.length,
        agentId,
      },
      'observation consolidated',
    );
    this.#events.emit('memory:consolidated', {
      agentId,
      observations: 1,
      sources: uniqueSources.length,
      timestamp: this.#now(),
    });
    return { id, sources: uniqueSources.length };
  }

  async flush(input: { agentId?: string | undefined } = {}): Promise<{ flushed: number }> {
    this.#checkOpen();
    const request = parse(z.object({ agentId: idSchema.optional() }).strict(), input, 'memory flush');
    await this.#writeChain;
    const flushed = await this.#db.transaction(async (tx) => {
      if (request.agentId === undefined) {
        const count = await tx.get<{ count: number }>('SELECT count(*) AS count FROM memory_entries');
        await tx.execute('DELETE FROM memory_fts');
        await tx.execute('DELETE FROM memory_links');
        await tx.execute('DELETE FROM memory_entries');
        return Number(count?.count ?? 0);
      }
      const rows = await tx.query<ScopedSeq>(
        'SELECT seq, agent_id, tenant FROM memory_entries WHERE agent_id = ?',
        [request.agentId],
      );
      await this.#deleteRows(
        tx,
        rows.map((row) => ({ ...row, seq: Number(row.seq) })),
      );
      return rows.length;
    });
    if (this.#index !== undefined) {
      if (request.agentId === undefined) this.#index.clear();
      else {
        for (const scope of this.#index.scopes()) {
          if (scope.split('\u0000')[0] === request.agentId) this.#index.clear(scope);
        }
      }
    }
    return { flushed };
  }

  async stats(): Promise<MemoryStats> {
    this.#checkOpen();
    const counts = await this.#db.get<{
      entries: number;
      memories: number;
      observations: number;
      agents: number;
      missing: number;
      content: number;
      vectors: number;
    }>(
      `SELECT count(*) AS entries,
         coalesce(sum(kind = 'memory'), 0) AS memories,
         coalesce(sum(kind = 'observation'), 0) AS observations,
         count(DISTINCT agent_id) AS agents,
         coalesce(sum(embedding IS NULL OR embedding_model IS NOT ?), 0) AS missing,
         coalesce(sum(length(CAST(content AS BLOB))), 0) AS content,
         coalesce(sum(length(embedding)), 0) AS vectors
       FROM memory_entries`,
      [this.embedder.model],
    );
    let database: number | null = null;
    try {
      const pages = await this.#db.get<{ page_count: number }>('PRAGMA page_count');
      const size = await this.#db.get<{ page_size: number }>('PRAGMA page_size');
      if (pages !== undefined && size !== undefined)
        database = Number(pages.page_count) * Number(size.page_size);
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
        kind: this.#index === undefined ? 'exact' : this.#settings.index.kind,
        ready: this.#index === undefined ? true : this.#indexReady,
        size: this.#index?.size() ?? 0,
        scopes: this.#index?.scopes().length ?? 0,
        dimensions: this.embedder.dimensions,
        model: this.embedder.model,
        embedderKind: this.embedder.kind,
        rebuildMs: this.#rebuildMs === null ? null : Math.round(this.#rebuildMs),
        lastError: this.#indexError,
      },
    };
  }

  embeddingCacheStats(): Promise<EmbeddingCacheStats> {
    return this.#cache.stats();
  }

  async backfillEmbeddings(): Promise<number> {
    this.#checkOpen();
    let done = 0;
    let after = 0;
    for (;;) {
      const rows = await this.#db.query<{ seq: number; agent_id: string; tenant: string; content: string }>(
        `SELECT seq, agent_id, tenant, content FROM memory_entries
         WHERE seq > ? AND (embedding IS NULL OR embedding_model IS NOT ?) ORDER BY seq LIMIT 128`,
        [after, this.embedder.model],
      );
      if (rows.length === 0) break;
      after = Number(rows[rows.length - 1]!.seq);
      const vectors = await this.#cache.embed(
        this.embedder,
        rows.map((row) => row.content),
      );
      await this.#db.transaction(async (tx) => {
        for (const [index, row] of rows.entries()) {
          await tx.execute('UPDATE memory_entries SET embedding = ?, embedding_model = ? WHERE seq = ?', [
            toBlob(vectors[index]!),
            this.embedder.model,
            row.seq,
          ]);
        }
      });
      if (this.#index !== undefined) {
        rows.forEach((row, index) => {
          this.#index!.add(AnnIndex.scopeKey(row.agent_id, row.tenant), [Number(row.seq)], [vectors[index]!]);
        });
      }
      done += rows.length;
    }
    if (done > 0) this.#logger.info({ step: 'extract', itemCount: done }, 'memory embeddings backfilled');
    return done;
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      while (this.#pending.length > 0) this.#flushPending();
      await this.#writeChain;
      await this.#rebuild;
      this.#index?.clear();
    })();
    return this.#closing;
  }

  #checkOpen(): void {
    if (this.#closing !== undefined) throw new MemoryStoreError('CLOSED', 'The memory store is closed');
  }
}
