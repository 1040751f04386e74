export {
  type AutoRecall,
  type AutoRecallOptions,
  createAutoRecall,
  type RecallBlock,
} from './auto-recall.js';
export {
  createHashingEmbedder,
  createOpenAiEmbedder,
  createTransformersEmbedder,
  type Embedder,
  type HashingEmbedderOptions,
  type OpenAiEmbedderOptions,
  type TransformersEmbedderOptions,
} from './embedder.js';
export { contentHash, type EmbeddingCacheStats } from './embedding-cache.js';
export {
  isMemoryStoreError,
  MemoryStoreError,
  type MemoryStoreErrorCode,
  type MemoryStoreErrorOptions,
} from './errors.js';
export {
  type EventSink,
  type MemoryErrorKind,
  type MemoryLogger,
  type MemoryProblemFields,
  noopEventSink,
  noopLogger,
} from './logger.js';
export { createMemoryStore, type MemoryStore, type MemoryStoreSettings } from './memory-store.js';
export { MIGRATION_PACKAGE, memoryMigrationSet, memoryMigrations, memoryPgMigrations } from './migrations.js';
export { type MemorySection, type MemoryStoreOptions, memorySectionSchema } from './options.js';
export { createHttpReranker, type HttpRerankerOptions, type Reranker } from './reranker.js';
export { createLexicalReranker, type LexicalRerankerOptions } from './lexical-reranker.js';
export {
  createEmbedderFromConfig,
  createMemoryService,
  type MemoryService,
  type MemoryServiceOptions,
} from './service.js';
export { type AgentTool, createMemoryTools, type MemoryToolsOptions, type ToolContext } from './tools.js';
export type {
  EntryKind,
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
  TrustLevel,
} from './types.js';
export { createMemorySwitch, type MemorySwitch } from './memory-switch.js';
