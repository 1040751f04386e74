import { BODY_LIMIT } from '@agentd/input-guards';
import { z } from 'zod';

/**
 * The daemon's `openaiApi` section: whether `/v1` is served, the largest request body and the
 * per-token request rate.
 */
export const openaiApiSectionSchema = z
  .object({
    /** Serve `/v1/*`. @default false */
    enabled: z.boolean().default(false),
    /** Largest request body in bytes; a larger one is answered 413. @default 1048576 */
    maxBodyBytes: z.number().int().min(BODY_LIMIT.min).max(BODY_LIMIT.max).default(BODY_LIMIT.default),
    /** Requests one token may make per window; `maxRequests: 0` turns the limit off. */
    rateLimit: z
      .object({
        /** @default 60 */
        maxRequests: z.number().int().min(0).max(1_000_000).default(60),
        /** @default 60000 */
        windowMs: z.number().int().min(1000).max(86_400_000).default(60_000),
      })
      .strict()
      .default({ maxRequests: 60, windowMs: 60_000 }),
  })
  .strict();

/** The parsed `openaiApi` section. */
export type OpenAiApiSection = z.output<typeof openaiApiSectionSchema>;
