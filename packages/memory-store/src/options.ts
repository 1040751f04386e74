import type { Injected } from '@agentd/contracts';
import type { ClusterBus, Database } from '@agentd/storage';
import { z } from 'zod';
import type { util } from 'zod/v4/core';
import {
  type Embedder,
  hashingEmbedderOptionsSchema,
  openAiEmbedderOptionsSchema,
  transformersEmbedderOptionsSchema,
} from './embedder.js';
import type { EventSink, MemoryLogger } from './logger.js';
import type { Reranker } from './reranker.js';

/**
 * A nested settings object: strict, and when left out, what it makes of `{}`. Its defaults
 * are then stated once, on its fields, instead of again in an object literal beside them.
 */
function settingsGroup<T extends z.ZodRawShape>(shape: T) {
  const schema = z.object(shape).strict();
  // A parsed value is never undefined; TypeScript cannot see that through the generic output type.
  return schema.default(schema.parse({}) as util.NoUndefined<z.output<typeof schema>>);
}

/** @internal The serialisable part of {@link MemoryStoreOptions}, validated at the boundary. */
export const memoryStoreSettingsSchema = z
  .object({
    fusion: z.enum(['auto', 'rrf', 'convex']).default('auto'),
    rrfK: z.number().int().min(1).max(1000).default(60),
    vectorWeight: z.number().min(0).max(1).optional(),
    candidates: z.number().int().min(1).max(1000).default(50),
    vectorMinSimilarity: z.number().min(-1).max(1).default(0.1),
    rerankCandidates: z.number().int().min(1).max(200).default(20),
    rerankTimeoutMs: z.number().int().min(1).max(120_000).default(2000),
    recall: settingsGroup({
      stopwords: z.boolean().default(true),
      neighbourWeight: z.number().min(0).max(4).default(0.5),
      neighbourSpan: z.number().int().min(0).max(4).default(2),
      neighbourWindowMs: z.number().int().min(0).max(86_400_000).default(1_800_000),
      speakerWeight: z.number().min(0).max(4).default(1),
      timeWeight: z.number().min(0).max(4).default(0.3),
      expansionWeight: z.number().min(0).max(4).default(0),
      synonymWeight: z.number().min(0).max(4).default(0.2),
      synonymSenses: z.number().int().min(1).max(8).default(1),
      synonymsPerWord: z.number().int().min(1).max(16).default(4),
      derivations: z.boolean().default(false),
      proximityWeight: z.number().min(0).max(4).default(0),
      nameClasses: z.boolean().default(true),
      namePlaces: z.boolean().default(false),
    }),
    index: settingsGroup({
      enabled: z.boolean().default(true),
      kind: z.enum(['quantized', 'hnsw']).default('quantized'),
      connectivity: z.number().int().min(0).max(256).default(16),
      expansionAdd: z.number().int().min(0).max(4096).default(128),
      expansionSearch: z.number().int().min(0).max(4096).default(128),
      quantization: z.enum(['f32', 'f16', 'i8']).default('f16'),
    }),
    cache: settingsGroup({
      maxEntries: z.number().int().min(0).max(10_000_000).default(10_000),
      maxPersisted: z.number().int().min(0).max(100_000_000).default(100_000),
    }),
    batch: settingsGroup({
      maxBatch: z.number().int().min(1).max(10_000).default(256),
      maxDelayMs: z.number().int().min(0).max(10_000).default(5),
    }),
    defaultAgentId: z.string().min(1).max(128).default('default'),
    defaultTenant: z.string().min(1).max(128).default('default'),
  })
  .strict();

/**
 * Options of {@link createMemoryStore}.
 * From {@link Injected}: `logger` gets ingestion steps and recall degradations (warn with hint
 * and errorKind), `now`, and `randomId` for new entry ids (default `mem_${randomUUID()}`).
 */
export interface MemoryStoreOptions extends Injected<MemoryLogger> {
  /** An open database (from `@agentd/storage`); the store migrates it and never closes it. */
  database: Database;
  /**
   * The cluster bus, on PostgreSQL shared by several instances: each write announces the
   * entries it changed, and every instance's vector index follows within about a second
   * (it also polls every second, so a lost notice only delays that). Without it, a store on
   * PostgreSQL polls alone; on libsql it is not used.
   */
  bus?: ClusterBus | undefined;
  /**
   * Turns texts into vectors.
   * @default createHashingEmbedder() (lexical, 384 dimensions)
   */
  embedder?: Embedder | undefined;
  /** Reorders the fused candidates; without one the fused order stands. */
  reranker?: Reranker | undefined;
  /**
   * How the full-text and vector lanes are merged. `auto`: with a semantic embedder a
   * convex combination (`vectorWeight`); with a lexical one the vector lane only adds
   * candidates after the full-text lane's. `rrf`: reciprocal rank fusion (`rrfK`).
   * `convex`: min-max normalised scores weighted by `vectorWeight` (see the README's figures).
   * @default 'auto'
   */
  fusion?: 'auto' | 'rrf' | 'convex' | undefined;
  /**
   * The k of reciprocal rank fusion.
   * @default 60
   */
  rrfK?: number | undefined;
  /**
   * Weight of the vector lane in convex fusion (the full-text lane gets 1 minus it).
   * @default 0.5 with `fusion: 'convex'`. With `auto` and a semantic embedder, unset means the
   * vector lane only adds candidates after the full-text lane's (no weight tried for a weak
   * model kept recall at the lexical default's); set it, after measuring a model with
   * `bench:recall`, and the lanes are combined at this weight.
   */
  vectorWeight?: number | undefined;
  /** How the full-text lane scores its candidates beyond bm25 (see the README's recall figures). */
  recall?:
    | {
        /** Leave English function and question words out of the match. @default true */
        stopwords?: boolean | undefined;
        /**
         * Share of a neighbouring turn's bm25 (the entry stored just before or after in the
         * same agent, tenant and session, within `neighbourWindowMs`, same transcript date)
         * added to an entry's own: an answer is often found through the question it answers.
         * @default 0.5
         */
        neighbourWeight?: number | undefined;
        /** Turns on each side that lend their score, the one at distance d weighted neighbourWeight^d. @default 2 */
        neighbourSpan?: number | undefined;
        /** @default 1800000 (30 minutes) */
        neighbourWindowMs?: number | undefined;
        /**
         * Added to an entry whose transcript speaker (`[date] Name: text`) the question names.
         * @default 1
         */
        speakerWeight?: number | undefined;
        /** Added, for a question asking when, to an entry that mentions a time. @default 0.3 */
        timeWeight?: number | undefined;
        /**
         * Weight of a second query made of the words that stand out in the best five matches
         * (frequent there, rare in the store). Off by default: on the development set no weight
         * or size tried moved recall@5 by more than two questions either way (see the README).
         * @default 0
         */
        expansionWeight?: number | undefined;
        /**
         * Weight of a second query made of the WordNet synonyms of the question's topic words
         * (`synonymsPerWord` of each, from its `synonymSenses` commonest senses of each part of
         * speech). @default 0.2
         */
        synonymWeight?: number | undefined;
        /** @default 1 (the commonest sense) */
        synonymSenses?: number | undefined;
        /** @default 4 */
        synonymsPerWord?: number | undefined;
        /**
         * Add to the synonym query the words WordNet derives from or to each topic word across
         * parts of speech ("creative": create, creativity). @default false
         */
        derivations?: boolean | undefined;
        /**
         * Added, times the share of the question's topic-word pairs that stand within four
         * words of each other in an entry. Off by default (see the README's ablations).
         * @default 0
         */
        proximityWeight?: number | undefined;
        /**
         * Index the WordNet classes of the names an entry holds ("Bach": composer) with its
         * words, and search those of the names a question holds with its topic words. Read at
         * write for the index, at search for the question. @default true
         */
        nameClasses?: boolean | undefined;
        /**
         * With `nameClasses`, also the places a name stands in ("Rome": italy), by WordNet's
         * part holonyms, indexed at write and searched with a question. @default false
         */
        namePlaces?: boolean | undefined;
      }
    | undefined;
  /**
   * Candidates each lane contributes before fusion.
   * @default 50
   */
  candidates?: number | undefined;
  /**
   * Cosine similarity below which a vector neighbour is not a candidate (a
   * nearest-neighbour search always finds neighbours, related or not).
   * @default 0.1
   */
  vectorMinSimilarity?: number | undefined;
  /**
   * Fused candidates handed to the reranker.
   * @default 20
   */
  rerankCandidates?: number | undefined;
  /**
   * Time the reranker gets before recall falls back to the fused order.
   * @default 2000
   */
  rerankTimeoutMs?: number | undefined;
  /** The in-process vector index, rebuilt from libsql at start (see the README's ANN figures). */
  index?:
    | {
        /** Off: every vector search is an exact scan in libsql. @default true */
        enabled?: boolean | undefined;
        /**
         * `quantized`: exact SIMD scan over int8 copies (no build cost; fastest to the
         * measured 100k entries). `hnsw`: usearch graph (sub-millisecond queries, slow inserts).
         * @default 'quantized'
         */
        kind?: 'quantized' | 'hnsw' | undefined;
        /** Graph degree (HNSW only) (usearch's connectivity, 0 = its default 16). @default 16 */
        connectivity?: number | undefined;
        /** Beam width while inserting (HNSW only). @default 128 */
        expansionAdd?: number | undefined;
        /** Beam width while searching (HNSW only). @default 128 */
        expansionSearch?: number | undefined;
        /** How the HNSW graph holds vector components (libsql keeps float32 regardless). @default 'f16' */
        quantization?: 'f32' | 'f16' | 'i8' | undefined;
      }
    | undefined;
  /** The embedding cache. */
  cache?:
    | {
        /** Vectors kept in memory (LRU). @default 10000 */
        maxEntries?: number | undefined;
        /** Vectors kept in libsql, oldest evicted first; 0 disables the persisted layer. @default 100000 */
        maxPersisted?: number | undefined;
      }
    | undefined;
  /** Coalescing of single `store()` calls into one transaction. */
  batch?:
    | {
        /** Entries per transaction. @default 256 */
        maxBatch?: number | undefined;
        /** How long a first entry waits for company. @default 5 */
        maxDelayMs?: number | undefined;
      }
    | undefined;
  /** @default 'default' */
  defaultAgentId?: string | undefined;
  /** @default 'default' */
  defaultTenant?: string | undefined;
  /**
   * Receives `memory:recalled`, `memory:reranked` and `memory:consolidated`.
   * @default a sink that drops everything
   */
  events?: EventSink | undefined;
}

// Each provider takes exactly what its factory validates (openai without `maxBatch` and `kind`,
// which the config does not expose), so the config cannot accept what the factory would refuse.
const embedderSchema = z.discriminatedUnion('provider', [
  hashingEmbedderOptionsSchema.extend({ provider: z.literal('hashing') }),
  openAiEmbedderOptionsSchema.omit({ maxBatch: true, kind: true }).extend({ provider: z.literal('openai') }),
  transformersEmbedderOptionsSchema.extend({ provider: z.literal('local') }),
]);

/**
 * The `memory` section of the agentd config file. `embedder.apiKey` and
 * `reranker.apiKey` are normally `${secret:NAME}` references, resolved by the daemon.
 */
export const memorySectionSchema = z
  .object({
    /** Serve the memory namespace and agent tools. @default true */
    enabled: z.boolean().default(true),
    /** @default { provider: 'hashing', dimensions: 384 } */
    embedder: embedderSchema.default({ provider: 'hashing', dimensions: 384 }),
    reranker: z
      .object({
        baseUrl: z.string().url(),
        model: z.string().min(1),
        apiKey: z.string().min(1).optional(),
        timeoutMs: z.number().int().min(1).max(120_000).default(2000),
      })
      .strict()
      .optional(),
    fusion: z.enum(['auto', 'rrf', 'convex']).default('auto'),
    vectorWeight: memoryStoreSettingsSchema.shape.vectorWeight,
    recall: memoryStoreSettingsSchema.shape.recall,
    candidates: z.number().int().min(1).max(1000).default(50),
    vectorMinSimilarity: z.number().min(-1).max(1).default(0.1),
    index: memoryStoreSettingsSchema.shape.index,
    cache: memoryStoreSettingsSchema.shape.cache,
    /** Recall before each agent turn, for agents whose config enables it. */
    autoRecall: settingsGroup({
      limit: z.number().int().min(1).max(50).default(5),
      minScore: z.number().min(0).default(0),
      maxChars: z.number().int().min(100).max(100_000).default(4000),
    }),
  })
  .strict();

/** The parsed `memory` config section (defaults filled in). */
export type MemorySection = z.output<typeof memorySectionSchema>;
