import { isMemoryStoreError, type MemoryStore } from '@agentd/memory-store';
import { RpcError } from '@agentd/rpc-core';
import { z } from 'zod';
import { methodsOf } from './define.js';
import { type TenantGuard, tenantGuard } from './tenancy.js';

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
function memoryRpcError(error: unknown): unknown {
  if (isMemoryStoreError(error, 'NOT_FOUND')) {
    return RpcError.notFound('Memory entry', String(error.data?.id ?? ''));
  }
  if (isMemoryStoreError(error, 'INVALID_INPUT')) return RpcError.invalidParams(error.message);
  return error;
}

/** Entries a tenant-bound caller's `memory.inspect` shows at most, newest first. */
const TENANT_INSPECT_LATEST = 20;

/** `memory.inspect` without an id for a tenant-bound caller: its tenant's counts and newest entries. */
async function tenantSummary(store: MemoryStore, tenant: string) {
  const all = await store.browse({ tenant, limit: TENANT_INSPECT_LATEST });
  const observations = await store.browse({ tenant, kind: 'observation', limit: 1 });
  return {
    tenant,
    entries: all.total,
    memories: all.total - observations.total,
    observations: observations.total,
    latest: all.entries,
  };
}

/**
 * memory.*: search and inspect [rpc] (a tenant-bound token's narrowed to its tenant); browse,
 * delete, embeddingCache, export, flush, stats and store [admin]. While `memory.enabled` is false (read at each
 * call, so a config change applies at once) every method answers -32000 saying so.
 */
export function memoryMethods(deps: { store: () => MemoryStore | undefined; tenants?: TenantGuard }) {
  const tenants = deps.tenants ?? tenantGuard();
  const store = (): MemoryStore => {
    const current = deps.store();
    if (current === undefined) {
      throw new RpcError(-32000, 'Memory is disabled (memory.enabled is false in config.yaml)');
    }
    return current;
  };
  const { rpcMethod, adminMethod } = methodsOf('memory', memoryRpcError);
  return [
    rpcMethod('search', {
      description:
        'Hybrid recall (full-text plus vector): results {id, content, score, timestamp} sorted by score.',
      params: z
        .object({
          query: z.string().min(1).max(10_000),
          limit: z.number().int().min(1).max(100).optional(),
          ...filterShape,
        })
        .strict(),
      handler: async (params, context) => {
        // A tenant-bound token searches its tenant's memories only.
        const tenant = tenants.memoryTenant(context, params.tenant);
        const { results } = await store().search(tenant === undefined ? params : { ...params, tenant });
        return { results };
      },
    }),
    rpcMethod('inspect', {
      description: 'One entry with its observation links, or overall statistics when no id is given.',
      params: z.object({ id: idSchema.optional() }).strict(),
      handler: async ({ id }, context) => {
        const tenant = context.identity.tenant;
        if (id === undefined) {
          // The statistics span every tenant: a tenant-bound token gets its tenant's own.
          return tenant === undefined ? store().stats() : tenantSummary(store(), tenant);
        }
        const entry = await store().inspect(id);
        // Another tenant's entry is not found, as an unknown id is.
        tenants.owned(context, entry.tenant, 'Memory entry', id);
        return entry;
      },
    }),
    adminMethod('browse', {
      description: 'Entries newest first, paginated: {entries, total, offset, limit}.',
      params: z
        .object({
          offset: z.number().int().min(0).optional(),
          limit: z.number().int().min(1).max(1000).optional(),
          ...filterShape,
        })
        .strict(),
      handler: (params) => store().browse(params),
    }),
    adminMethod('delete', {
      description: 'Delete one entry; observations left without a source are deleted too.',
      params: z.object({ id: idSchema }).strict(),
      handler: ({ id }) => store().delete(id),
    }),
    adminMethod('embeddingCache', {
      description: 'Embedding cache statistics: size, hits, misses, hit rate, evictions.',
      handler: () => store().embeddingCacheStats(),
    }),
    adminMethod('export', {
      description: 'Every entry (of one agent, if given) without vectors: {entries, count}.',
      params: z.object({ agentId: idSchema.optional() }).strict(),
      handler: (params) => store().export(params),
    }),
    adminMethod('flush', {
      description: 'Delete every entry (of one agent, if given): {flushed}.',
      params: z.object({ agentId: idSchema.optional() }).strict(),
      handler: (params) => store().flush(params),
    }),
    adminMethod('stats', {
      description: 'Counts, bytes and index health.',
      handler: () => store().stats(),
    }),
    adminMethod('store', {
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
      handler: (params) => store().store(params),
    }),
  ];
}
