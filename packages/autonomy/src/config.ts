import { TOOL_PATTERN, TOOL_PATTERN_RULE } from '@agentd/input-guards';
import { z } from 'zod';

/** Tool name patterns: names or globs (`*` any run, `?` one character), `@agentd/input-guards`' syntax. */
const patternsSchema = z.array(z.string().regex(TOOL_PATTERN, TOOL_PATTERN_RULE)).max(256);

const budgetSchema = z
  .object({
    /** Tokens (input + output) of all the run's turns. @default 200000 */
    maxTokens: z.number().int().positive().default(200_000),
    /** Estimated cost in USD of the run's model calls. @default 5 */
    maxCostUsd: z.number().positive().default(5),
    /** Tool calls the run may make. @default 200 */
    maxToolCalls: z.number().int().positive().default(200),
  })
  .strict();

const durabilitySchema = z
  .object({
    /** At start, runs left `running` are resumed where safe, else marked `orphaned`. @default true */
    enabled: z.boolean().default(true),
  })
  .strict();

/**
 * The `autonomy` config section: limits of sub-agent runs, their budgets and leases, the
 * capability-denial breaker and durability. Every key has a default; a changed section
 * applies to spawns and gate decisions from then on.
 */
export const autonomySectionSchema = z
  .object({
    /** Longest chain of runs below an ordinary session (a child of a session has depth 1). @default 3 */
    maxDepth: z.number().int().min(1).max(16).default(3),
    /** Runs one parent (session or run) may have running at once. @default 5 */
    maxChildrenPerParent: z.number().int().min(1).max(100).default(5),
    /** Sub-agent runs running at once, daemon-wide. @default 8 */
    maxConcurrentRuns: z.number().int().min(1).max(1000).default(8),
    /** Longest one run may take before it ends with status `timeout`. @default 600000 (10 min) */
    runTimeoutMs: z.number().int().min(1000).max(86_400_000).default(600_000),
    /** Time to live of a run's capability lease; renew extends it. @default 3600000 (1 h) */
    leaseTtlMs: z.number().int().min(1000).max(604_800_000).default(3_600_000),
    /** Per-run budget; a run past any of them is refused further tool calls and turns. */
    budget: budgetSchema.default(budgetSchema.parse({})),
    /** Consecutive denied tool calls in one run tree that end the tree (0 disables). @default 5 */
    denialBreakerThreshold: z.number().int().min(0).max(1000).default(5),
    /**
     * The capability profile an evicted run tree falls back to (`autonomy.evict`): only these
     * tools (and only those the run already had) stay callable. @default read and list tools
     */
    defaultProfile: patternsSchema.default(['subagent_list', 'subagent_wait', 'capabilities_introspect']),
    durability: durabilitySchema.default(durabilitySchema.parse({})),
  })
  .strict();

/** The parsed `autonomy` section. */
export type AutonomySection = z.infer<typeof autonomySectionSchema>;

const agentToAgentSchema = z
  .object({
    /**
     * `subagent.steer` injects the message into the running child (same run, transcript
     * kept) instead of killing it and spawning a fresh run. @default false
     */
    steerInject: z.boolean().default(false),
  })
  .strict();

/** The `security` config section (its agent-to-agent part). */
export const securitySectionSchema = z
  .object({ agentToAgent: agentToAgentSchema.default(agentToAgentSchema.parse({})) })
  .strict();

/** The parsed `security` section. */
export type SecuritySection = z.infer<typeof securitySectionSchema>;
