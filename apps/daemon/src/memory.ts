import { resolveSecretRefs } from '@agentd/config-store';
import type { RootLogger } from '@agentd/logging';
import {
  type AgentTool,
  type AutoRecall,
  createAutoRecall,
  createHashingEmbedder,
  createHttpReranker,
  createMemoryStore,
  createMemoryTools,
  createOpenAiEmbedder,
  createTransformersEmbedder,
  type Embedder,
  type EventSink,
  type MemorySection,
  type MemoryStore,
  type MemoryStoreSettings,
} from '@agentd/memory-store';
import type { Database } from '@agentd/storage';

/** The memory service the daemon composes: the store, automatic recall and the agent tools. */
export interface MemoryService {
  store: MemoryStore;
  autoRecall: AutoRecall;
  tools: AgentTool[];
  /**
   * Applies a new `memory` section in place (secret references resolved again): recall and
   * auto-recall settings at once; a changed embedder is rebuilt and old vectors re-embedded in
   * the background. `enabled` is read at start only.
   */
  applyConfig(section: MemorySection): Promise<void>;
  close(): Promise<void>;
}

function embedderFor(section: MemorySection['embedder']): Embedder {
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

/**
 * Opens the memory store on the shared database from the `memory` section
 * (secret references in API keys resolved from `env`), and re-embeds entries
 * stored without a vector in the background. `undefined` when memory is disabled.
 */
export async function openMemoryService(options: {
  db: Database;
  section: MemorySection;
  env: NodeJS.ProcessEnv;
  logger: RootLogger;
  events: EventSink;
}): Promise<MemoryService | undefined> {
  if (!options.section.enabled) return undefined;
  const resolve = (next: MemorySection) => resolveSecretRefs(next, (name) => options.env[name]);
  let section = await resolve(options.section);
  const log = options.logger.module('memory');
  const store = await createMemoryStore({
    database: options.db,
    ...storeSettings(section, embedderFor(section.embedder)),
    logger: log,
    events: options.events,
  });
  const runBackfill = () =>
    store.backfillEmbeddings().then(
      () => undefined,
      (error: unknown) => {
        log.warn(
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
        storeSettings(resolved, sameEmbedder ? store.embedder : embedderFor(resolved.embedder)),
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

/** The store settings a (resolved) `memory` section asks for. */
function storeSettings(section: MemorySection, embedder: Embedder): MemoryStoreSettings {
  return {
    embedder,
    reranker: section.reranker === undefined ? undefined : createHttpReranker(section.reranker),
    rerankTimeoutMs: section.reranker?.timeoutMs,
    fusion: section.fusion,
    candidates: section.candidates,
    vectorMinSimilarity: section.vectorMinSimilarity,
    index: section.index,
    cache: section.cache,
  };
}
