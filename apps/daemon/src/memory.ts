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
} from '@agentd/memory-store';
import type { Database } from '@agentd/storage';

/** The memory service the daemon composes: the store, automatic recall and the agent tools. */
export interface MemoryService {
  store: MemoryStore;
  autoRecall: AutoRecall;
  tools: AgentTool[];
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
  const section = await resolveSecretRefs(options.section, (name) => options.env[name]);
  const log = options.logger.module('memory');
  const store = await createMemoryStore({
    database: options.db,
    embedder: embedderFor(section.embedder),
    reranker: section.reranker === undefined ? undefined : createHttpReranker(section.reranker),
    rerankTimeoutMs: section.reranker?.timeoutMs,
    fusion: section.fusion,
    candidates: section.candidates,
    vectorMinSimilarity: section.vectorMinSimilarity,
    index: section.index,
    cache: section.cache,
    logger: log,
    events: options.events,
  });
  const backfill = store.backfillEmbeddings().catch((error: unknown) => {
    log.warn(
      {
        err: error,
        hint: 'entries without vectors stay full-text only until the embedder works; restart to retry',
        errorKind: 'dependency',
      },
      'memory embedding backfill failed',
    );
  });
  return {
    store,
    autoRecall: createAutoRecall({ store, ...section.autoRecall }),
    tools: createMemoryTools(store) as AgentTool[],
    close: async () => {
      await backfill;
      await store.close();
    },
  };
}
