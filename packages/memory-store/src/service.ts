import { createAutoRecall, type AutoRecall } from './auto-recall.js';
import {
  createHashingEmbedder,
  createOpenAiEmbedder,
  createTransformersEmbedder,
  type Embedder,
} from './embedder.js';
import type { EventSink, MemoryLogger } from './logger.js';
import { createMemoryStore, type MemoryStore, type MemoryStoreSettings } from './memory-store.js';
import type { MemorySection, MemoryStoreOptions } from './options.js';
import { createHttpReranker } from './reranker.js';
import { type AgentTool, createMemoryTools } from './tools.js';

/**
 * The embedder a `memory.embedder` config section names: the built-in hashing one, an
 * OpenAI-compatible endpoint, or a local ONNX model. Secret references in `apiKey` must
 * already be resolved.
 */
export function createEmbedderFromConfig(section: MemorySection['embedder']): Embedder {
  switch (section.provider) {
    case 'hashing':
      return createHashingEmbedder({ dimensions: section.dimensions });
    case 'openai':
      return createOpenAiEmbedder({
        baseUrl: section.baseUrl,
        model: section.model,
        dimensions: section.dimensions,
        apiKey: section.apiKey,
        requestDimensions: section.requestDimensions,
        timeoutMs: section.timeoutMs,
      });
    case 'local':
      return createTransformersEmbedder({
        modelPath: section.modelPath,
        dimensions: section.dimensions,
        pooling: section.pooling,
      });
  }
}

/** Options of {@link createMemoryService}. */
export interface MemoryServiceOptions {
  /** An open database; the store migrates it and never closes it. */
  database: MemoryStoreOptions['database'];
  /** The `memory` section (`enabled` is not looked at: the caller decides). */
  section: MemorySection;
  /**
   * Resolves secret references (`${secret:NAME}`) in the section's API keys, at start and on
   * each {@link MemoryService.applyConfig}.
   * @default the section as it is
   */
  resolveSecrets?: ((section: MemorySection) => Promise<MemorySection>) | undefined;
  /** The cluster bus on PostgreSQL (see {@link MemoryStoreOptions.bus}). @default none */
  bus?: MemoryStoreOptions['bus'];
  /** @default no-op */
  logger?: MemoryLogger | undefined;
  /** Receives `memory:*` events. @default drops them */
  events?: EventSink | undefined;
}

/** The store, automatic recall and agent tools of one `memory` section. */
export interface MemoryService {
  store: MemoryStore;
  autoRecall: AutoRecall;
  tools: AgentTool[];
  /**
   * Applies a new `memory` section in place (secret references resolved again): recall and
   * auto-recall settings at once; a changed embedder is rebuilt and old vectors re-embedded in
   * the background. `enabled` is not looked at.
   */
  applyConfig(section: MemorySection): Promise<void>;
  /** Waits for the embedding backfill, then closes the store. */
  close(): Promise<void>;
}

/** The store settings a (resolved) `memory` section asks for. */
function storeSettings(section: MemorySection, embedder: Embedder): MemoryStoreSettings {
  return {
    embedder,
    reranker: section.reranker === undefined ? undefined : createHttpReranker(section.reranker),
    rerankTimeoutMs: section.reranker?.timeoutMs,
    fusion: section.fusion,
    vectorWeight: section.vectorWeight,
    recall: section.recall,
    candidates: section.candidates,
    vectorMinSimilarity: section.vectorMinSimilarity,
    index: section.index,
    cache: section.cache,
  };
}

/**
 * Opens the memory store a `memory` section describes (embedder, reranker, fusion, index,
 * cache), with its automatic recall and agent tools, and re-embeds entries stored without a
 * vector in the background (a failure is logged; those entries stay full-text only).
 */
export async function createMemoryService(options: MemoryServiceOptions): Promise<MemoryService> {
  const { logger } = options;
  const resolve = options.resolveSecrets ?? (async (section: MemorySection) => section);
  let section = await resolve(options.section);
  const store = await createMemoryStore({
    database: options.database,
    bus: options.bus,
    ...storeSettings(section, createEmbedderFromConfig(section.embedder)),
    logger,
    events: options.events,
  });
  const runBackfill = () =>
    store.backfillEmbeddings().then(
      () => undefined,
      (error: unknown) => {
        logger?.warn(
          {
            err: error,
            hint: 'entries without vectors stay full-text only until the embedder works; change the memory section or restart to retry',
            errorKind: 'dependency',
          },
          'memory embedding backfill failed',
        );
      },
    );
  let backfill = runBackfill();
  const autoRecall = createAutoRecall({ store, ...section.autoRecall });
  return {
    store,
    autoRecall,
    tools: createMemoryTools(store),
    applyConfig: async (next) => {
      const resolved = await resolve(next);
      const sameEmbedder = JSON.stringify(resolved.embedder) === JSON.stringify(section.embedder);
      store.applyConfig(
        storeSettings(resolved, sameEmbedder ? store.embedder : createEmbedderFromConfig(resolved.embedder)),
      );
      autoRecall.applyConfig(resolved.autoRecall);
      section = resolved;
      if (!sameEmbedder) backfill = backfill.then(runBackfill);
    },
    close: async () => {
      await backfill;
      await store.close();
    },
  };
}
