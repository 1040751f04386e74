import { z } from 'zod';

/** File name of the cache-trace stream in the daemon's logs directory. */
export const CACHE_TRACE_FILE = 'cache-trace.jsonl';

/** Size at which the cache-trace file rolls (the contract's per-stream cap, 50 MB). */
export const CACHE_TRACE_MAX_BYTES = 50 * 1024 * 1024;

/**
 * One line of the cache-trace stream: the prompt-cache figures of one model call. Counts and
 * ids only; never prompt or reply text.
 */
export const cacheTraceRecordSchema = z.object({
  /** When the call finished (epoch ms). */
  ts: z.number().int(),
  traceId: z.string(),
  sessionKey: z.string(),
  agentId: z.string(),
  /** Provider id (config key). */
  provider: z.string(),
  model: z.string(),
  /** The model call's step within its turn (1-based). */
  step: z.number().int().positive(),
  /** Input tokens of the call, cached ones included. */
  inputTokens: z.number().int().nonnegative(),
  cacheReadTokens: z.number().int().nonnegative(),
  cacheWriteTokens: z.number().int().nonnegative(),
  /** Whether the provider served part of the prompt from its cache (`cacheReadTokens > 0`). */
  hit: z.boolean(),
});

/** One cache-trace line. */
export type CacheTraceRecord = z.infer<typeof cacheTraceRecordSchema>;

/**
 * Receives one record per model call. The daemon appends them as JSON lines to a rotating
 * `logs/cache-trace.jsonl`; `append` should not block for long, and a throw is logged and
 * never fails a turn.
 */
export interface CacheTraceSink {
  append(record: CacheTraceRecord): void;
}
