import type { AgentTool, ToolContext } from '@agentd/contracts';
import { z } from 'zod';
import type { MemoryStore } from './memory-store.js';

export type { AgentTool, ToolContext } from '@agentd/contracts';

/** Options of {@link createMemoryTools}. */
export interface MemoryToolsOptions {
  /**
   * Maps the calling turn to its memory tenant.
   * @default () => 'default'
   */
  tenantOf?: ((context: ToolContext) => string) | undefined;
  /**
   * Most results memory_search returns.
   * @default 10
   */
  maxResults?: number | undefined;
}

const searchParams = z
  .object({
    query: z.string().min(1).max(2000).describe('What to look for, in words the memory would contain'),
    limit: z.number().int().min(1).max(50).optional().describe('How many memories to return (default 5)'),
    tags: z
      .array(z.string().min(1).max(64))
      .max(8)
      .optional()
      .describe('Only memories carrying all these tags'),
  })
  .strict();

const storeParams = z
  .object({
    content: z.string().min(1).max(8000).describe('The fact to remember, self-contained'),
    tags: z.array(z.string().min(1).max(64)).max(16).optional().describe('Short labels for later filtering'),
  })
  .strict();

/**
 * The agent tools `memory_search` and `memory_store`, bound to the calling
 * agent (and tenant) so an agent only reads and writes its own memory.
 * Memories stored by an agent carry trust `learned` and the session key.
 */
export function createMemoryTools(
  store: MemoryStore,
  options: MemoryToolsOptions = {},
): [AgentTool<z.infer<typeof searchParams>>, AgentTool<z.infer<typeof storeParams>>] {
  // A turn's memory tenant (a tenant-bound caller's) when it has one.
  const tenantOf = options.tenantOf ?? ((context: ToolContext) => context.memoryTenant ?? 'default');
  const maxResults = options.maxResults ?? 10;
  const lexical = store.embedder.kind === 'lexical';
  return [
    {
      name: 'memory_search',
      // Bound to the turn's memory tenant (`tenantOf`).
      tenantScoped: true,
      description:
        'Search your long-term memory. Returns the most relevant stored memories with a relevance score.' +
        (lexical ? ' Matching is by words, so use the words the memory would contain.' : ''),
      params: searchParams,
      async handler(params, context) {
        const { results } = await store.search({
          query: params.query,
          limit: Math.min(params.limit ?? 5, maxResults),
          agentId: context.agentId,
          tenant: tenantOf(context),
          tags: params.tags,
          signal: context.signal,
        });
        return { results };
      },
    },
    {
      name: 'memory_store',
      tenantScoped: true,
      description: 'Store a fact in your long-term memory so that later conversations can recall it.',
      params: storeParams,
      async handler(params, context) {
        return store.store({
          content: params.content,
          tags: params.tags,
          agentId: context.agentId,
          tenant: tenantOf(context),
          sessionKey: context.sessionKey,
          trust: 'learned',
        });
      },
    },
  ];
}
