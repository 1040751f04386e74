import { z } from 'zod';
import { defaultGraphLimits, type GraphLimits } from './definition.js';
import { GraphError } from './errors.js';

/**
 * The `graph` config section. The service takes it at creation and again, in place, from
 * `GraphService.applyConfig`.
 */
export const graphSectionSchema = z
  .object({
    /** Most nodes in one graph. */
    maxNodes: z.number().int().min(1).max(100_000).default(defaultGraphLimits.maxNodes),
    /** Most characters in one node prompt. */
    maxPromptChars: z.number().int().min(1).max(1_048_576).default(defaultGraphLimits.maxPromptChars),
    /** Most retries a node may ask for. */
    maxRetries: z.number().int().min(0).max(100).default(defaultGraphLimits.maxRetries),
    /** Longest per-node timeout a node may ask for, in ms. */
    maxTimeoutMs: z.number().int().min(1).default(defaultGraphLimits.maxTimeoutMs),
    /** Concurrency of a run that asks for none. */
    defaultConcurrency: z.number().int().min(1).max(1024).default(4),
    /** Highest concurrency a run may ask for. */
    maxConcurrency: z.number().int().min(1).max(1024).default(16),
    /** Time limit of a node attempt that sets none, in ms. */
    defaultNodeTimeoutMs: z.number().int().min(1).default(300_000),
    /** Wait before a retry, in ms. */
    retryDelayMs: z.number().int().min(0).max(600_000).default(1000),
    /** Finished runs whose outputs stay in memory (older ones are read from disk). */
    memoryRuns: z.number().int().min(0).max(10_000).default(16),
  })
  .strict();

/** The parsed `graph` section. */
export type GraphSection = z.infer<typeof graphSectionSchema>;

/** The `graph` section as written in the config (every key optional, defaults filled in). */
export type GraphSectionInput = z.input<typeof graphSectionSchema>;

/**
 * @internal Validates a `graph` section and shapes it as service settings.
 * @throws {GraphError} `INVALID_OPTIONS` when it fails validation.
 */
export function settingsFromSection(section: GraphSectionInput): {
  limits: GraphLimits;
  defaultConcurrency: number;
  maxConcurrency: number;
  defaultNodeTimeoutMs: number;
  retryDelayMs: number;
  memoryRuns: number;
} {
  const parsed = graphSectionSchema.safeParse(section);
  if (!parsed.success) {
    throw new GraphError('INVALID_OPTIONS', `graph section: ${parsed.error.issues[0]?.message}`, {
      data: { issues: parsed.error.issues },
    });
  }
  const { maxNodes, maxPromptChars, maxRetries, maxTimeoutMs, ...rest } = parsed.data;
  return { ...rest, limits: { maxNodes, maxPromptChars, maxRetries, maxTimeoutMs } };
}
