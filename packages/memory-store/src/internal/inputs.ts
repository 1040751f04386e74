import { z } from 'zod';
import { MemoryStoreError } from '../errors.js';

// Input schemas of the store's methods, checked at the boundary before any work.

export const tagSchema = z.string().min(1).max(64);
export const idSchema = z.string().min(1).max(128);
export const storeInputSchema = z
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
export const filterShape = {
  agentId: idSchema.optional(),
  tenant: idSchema.optional(),
  tags: z.array(tagSchema).max(32).optional(),
  sinceMs: z.number().int().min(0).optional(),
  untilMs: z.number().int().min(0).optional(),
  sessionKey: z.string().min(1).max(512).optional(),
  kind: z.enum(['memory', 'observation']).optional(),
};
export const searchInputSchema = z
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
export const browseInputSchema = z
  .object({
    ...filterShape,
    offset: z.number().int().min(0).optional(),
    limit: z.number().int().min(1).max(1000).optional(),
  })
  .strict();

/** Parses `value` or throws `INVALID_INPUT` naming every issue. */
export function parse<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
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

/** Parses the options of a factory (an embedder, a reranker) or throws `INVALID_OPTIONS` as zod words it. */
export function parseOptions<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new MemoryStoreError('INVALID_OPTIONS', `Invalid ${what} options: ${parsed.error.message}`);
  }
  return parsed.data;
}
