import { isMemoryStoreError, type MemoryStore } from '@agentd/memory-store';
import { defineMethod, RpcError } from '@agentd/rpc-core';
import { z } from 'zod';

const idSchema = z.string().min(1).max(128);
const tagsSchema = z.array(z.string().min(1).max(64)).max(32);
const filterShape = {
  agentId: idSchema.optional(),
  tenant: idSchema.optional(),
  tags: tagsSchema.optional(),
  sinceMs: z.number().int().min(0).optional(),
  untilMs: z.number().int().min(0).optional(),
};

/** Maps the store's errors to the gateway's: unknown ids are -32004, bad input -32602. */
async function call<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (isMemoryStoreError(error, 'NOT_FOUND')) {
      throw RpcError.notFound('Memory entry', String(error.data?.id ?? ''));
    }
    if (isMemoryStoreError(error, 'INVALID_INPUT')) throw RpcError.invalidParams(error.message);
    throw error;
  }
}

/**
 * memory.*: search and inspect [rpc]; browse, delete, embeddingCache, export,
 * flush, stats and store [admin]. While `memory.enabled` is false (read at each
 * call, so a config change applies at once) every method answers -32000 saying so.
 */
export function memoryMethods(deps: { store: () => MemoryStore | undefined }) {
  const store = (): MemoryStore => {
    const current = deps.store();
    if (current === undefined) {
      throw new RpcError(-32000, 'Memory is disabled (memory.enabled is false in config.yaml)');
    }
    return current;
  };
  return [
    defineMethod({
      name: 'memory.search',
      scope: 'rpc',
      description:
        'Hybrid recall (full-text plus vector): results {id, content, score, timestamp} sorted by score.',
      params: z
        .object({
          query: z.string().min(1).max(10_000),
          limit: z.number().int().min(1).max(100).optional(),
          ...filterShape,
        })
        .strict(),
      handler: async (params) => {
        const { results } = await call(() => store().search(params));
        return { results };
      },
    }),
    defineMethod({
      name: 'memory.inspect',
      scope: 'rpc',
      description: 'One entry with its observation links, or overall statistics when no id is given.',
      params: z.object({ id: idSchema.optional() }).strict(),
      handler: async ({ id }) =>
        call<unknown>(() => (id === undefined ? store().stats() : store().inspect(id))),
    }),
    defineMethod({
      name: 'memory.browse',
      scope: 'admin',
      description: 'Entries newest first, paginated: {entries, total, offset, limit}.',
      params: z
        .object({
          offset: z.number().int().min(0).optional(),
          limit: z.number().int().min(1).max(1000).optional(),
          ...filterShape,
        })
        .strict(),
      handler: (params) => call(() => store().browse(params)),
    }),
    defineMethod({
      name: 'memory.delete',
      scope: 'admin',
      description: 'Delete one entry; observations left without a source are deleted too.',
      params: z.object({ id: idSchema }).strict(),
      handler: ({ id }) => call(() => store().delete(id)),
    }),
    defineMethod({
      name: 'memory.embeddingCache',
      scope: 'admin',
      description: 'Embedding cache statistics: size, hits, misses, hit rate, evictions.',
      params: z.object({}).strict(),
      handler: () => call(() => store().embeddingCacheStats()),
    }),
    defineMethod({
      name: 'memory.export',
      scope: 'admin',
      description: 'Every entry (of one agent, if given) without vectors: {entries, count}.',
      params: z.object({ agentId: idSchema.optional() }).strict(),
      handler: (params) => call(() => store().export(params)),
    }),
    defineMethod({
      name: 'memory.flush',
      scope: 'admin',
      description: 'Delete every entry (of one agent, if given): {flushed}.',
      params: z.object({ agentId: idSchema.optional() }).strict(),
      handler: (params) => call(() => store().flush(params)),
    }),
    defineMethod({
      name: 'memory.stats',
      scope: 'admin',
      description: 'Counts, bytes and index health.',
      params: z.object({}).strict(),
      handler: () => call(() => store().stats()),
    }),
    defineMethod({
      name: 'memory.store',
      scope: 'admin',
      description: 'Store a new entry: {id}.',
      params: z
        .object({
          content: z.string().min(1).max(100_000),
          agentId: idSchema.optional(),
          tenant: idSchema.optional(),
          sessionKey: z.string().min(1).max(512).optional(),
          tags: tagsSchema.optional(),
          metadata: z.record(z.string(), z.unknown()).optional(),
          trust: z.enum(['system', 'learned', 'external']).optional(),
        })
        .strict(),
      handler: (params) => call(() => store().store(params)),
    }),
  ];
}
