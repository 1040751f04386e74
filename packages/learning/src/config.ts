import { z } from 'zod';

/** The `learning` config section. */
export const learningSectionSchema = z
  .object({
    /**
     * Resolve turn outcomes and run the `Memory lifecycle` sweep. On by default: a turn costs
     * one outcome row written off the turn's path (plus one counter row per recalled memory),
     * and synthesis only runs for capable models with corroborated procedures. Off keeps no
     * outcome rows (they hold the first 500 characters of each user message). @default true
     */
    enabled: z.boolean().default(true),
    /** Days a swept outcome row (and a sweep row, the last one always kept) is kept. @default 30 */
    retainOutcomesDays: z.number().int().min(1).max(3650).default(30),
    /** How often the `Memory lifecycle` cron job sweeps. @default 21600000 (6 h) */
    sweepIntervalMs: z
      .number()
      .int()
      .min(60_000)
      .default(6 * 60 * 60 * 1000),
    /** Successful turns of one procedure, from distinct sessions, before reflection admits a candidate. @default 2 */
    admitAfter: z.number().int().min(1).max(20).default(2),
    /** Corroborating successes from distinct sessions that make a candidate active. @default 2 */
    promoteAfter: z.number().int().min(1).max(20).default(2),
    /** Failed or corrected reuses (distinct sessions) that make an active procedure stale, and a stale one archived. @default 2 */
    demoteAfter: z.number().int().min(1).max(20).default(2),
    judge: z
      .object({
        /**
         * Ask the agent's own model whether a turn with no other evidence (no tools, no pipeline
         * failure) succeeded: one extra model call per such turn. Agents on the offline provider
         * or a small or nano class are never judged. @default false
         */
        enabled: z.boolean().default(false),
      })
      .strict()
      .default({ enabled: false }),
    memory: z
      .object({
        /** Recalls without a successful turn before a memory is demoted. @default 5 */
        demoteAfterRecalls: z.number().int().min(1).default(5),
        /** Recalls without a successful turn before a demoted memory is evicted. @default 10 */
        evictAfterRecalls: z.number().int().min(1).default(10),
      })
      .strict()
      .default({ demoteAfterRecalls: 5, evictAfterRecalls: 10 }),
  })
  .strict();

/** The parsed `learning` section. */
export type LearningSection = z.infer<typeof learningSectionSchema>;
