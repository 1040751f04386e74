import { isUnsafeKey, TOOL_PATTERN, TOOL_PATTERN_RULE } from '@agentd/input-guards';
import { z } from 'zod';

/**
 * Identifier of an agent or a provider: letters, digits, `.`, `_`, `-`; 1-64 characters; not
 * `constructor` or `prototype`, which key the config's maps and name object built-ins.
 */
export const entityIdSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._-]*$/,
    'letters, digits, dot, underscore and dash only, starting alphanumeric',
  )
  .refine((id) => !isUnsafeKey(id), 'constructor and prototype are reserved names');

/** Capability class of a provider's models: decides small/nano context caps. */
export const capabilityClassSchema = z.enum(['frontier', 'mid', 'small', 'nano']);

/** Capability class of a provider's models. */
export type CapabilityClass = z.infer<typeof capabilityClassSchema>;

/** Prices in US dollars per million tokens, for cost estimates. */
export const pricesSchema = z
  .object({
    /** Uncached input. @default 0 */
    inputPerMillion: z.number().nonnegative().default(0),
    /** Output. @default 0 */
    outputPerMillion: z.number().nonnegative().default(0),
    /** Cache reads; the input price when absent (no discount assumed). */
    cacheReadPerMillion: z.number().nonnegative().optional(),
    /** Cache writes; the input price when absent. */
    cacheWritePerMillion: z.number().nonnegative().optional(),
  })
  .strict();

/** Prices of a model. */
export type Prices = z.infer<typeof pricesSchema>;

/**
 * What a model takes, as the operator pins it (on the provider for all its models, or on one
 * model). Absent means what the provider's wire protocol carries; `false` narrows it, `true`
 * cannot add what the protocol lacks.
 */
export const modelCapabilitiesSchema = z
  .object({
    /**
     * Answers held to a JSON schema (`response_format: json_schema`). When false, a turn asking
     * for one is refused naming `callOptions.responseFormat` (`/v1`: 400 naming `response_format`).
     */
    jsonSchema: z.boolean().optional(),
    /**
     * Image input. When false, a turn carrying images is refused naming `images`, and images a
     * tool returns are not sent: the tool result says what they were instead.
     */
    images: z.boolean().optional(),
  })
  .strict();

/** What a model takes, as configured. */
export type ModelCapabilities = z.infer<typeof modelCapabilitiesSchema>;

/** A model of a provider: a bare id, or an id with its own window, output limit, prices and capabilities. */
export const providerModelSchema = z.union([
  z.string().min(1),
  z
    .object({
      id: z.string().min(1),
      contextWindow: z.number().int().positive().optional(),
      maxOutputTokens: z.number().int().positive().optional(),
      prices: pricesSchema.optional(),
      /** Over the provider's `capabilities` for this model. */
      capabilities: modelCapabilitiesSchema.optional(),
    })
    .strict(),
]);

/** One entry of `providers.entries`. */
export const providerEntrySchema = z
  .object({
    /** Wire protocol. */
    type: z.enum(['offline', 'openai-compatible', 'anthropic']),
    /** Endpoint base URL, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1`. */
    baseUrl: z.string().url().optional(),
    /** API key: a `${secret:NAME}` reference (preferred) or a plain value; never shown by models.list. */
    apiKey: z.string().min(1).optional(),
    /** Extra HTTP headers sent with every request. */
    headers: z.record(z.string(), z.string()).optional(),
    /** Models served; the first is the default. */
    models: z.array(providerModelSchema).default([]),
    /** Context window in tokens, for models without their own. @default 128000 */
    contextWindow: z.number().int().positive().default(128_000),
    /** Maximum output tokens, for models without their own. @default 4096 */
    maxOutputTokens: z.number().int().positive().default(4096),
    /**
     * Operator pins: `capabilityClass` decides the small/nano context caps; `jsonSchema` and
     * `images` say what the provider's models take (see {@link modelCapabilitiesSchema}).
     */
    capabilities: z
      .object({ capabilityClass: capabilityClassSchema.optional(), ...modelCapabilitiesSchema.shape })
      .strict()
      .default({}),
    /** Prices per million tokens for models without their own. */
    prices: pricesSchema.default({ inputPerMillion: 0, outputPerMillion: 0 }),
    /** Time one model request may take, first byte to last. @default 120000 */
    timeoutMs: z.number().int().positive().default(120_000),
    /**
     * Retries of a request answered 408/409/429/5xx or failing to connect, before any output: the
     * AI SDK's own retry (backoff from 2 s, doubled; a `retry-after(-ms)` answer wins). @default 2
     */
    maxRetries: z.number().int().min(0).max(10).default(2),
  })
  .strict();

/** A configured provider. */
export type ProviderEntry = z.infer<typeof providerEntrySchema>;

/** The `providers` config section: `providers.entries.<id>`. */
export const providersSectionSchema = z
  .object({ entries: z.record(entityIdSchema, providerEntrySchema).default({}) })
  .strict();

/** The parsed `providers` section. */
export type ProvidersSection = z.infer<typeof providersSectionSchema>;

/** Per-agent timeouts. */
export const agentTimeoutsSchema = z
  .object({
    /** Makespan ceiling of a turn. @default 120000 */
    turnMs: z.number().int().positive().default(120_000),
    /** Longest silence of the model stream before the turn is ended as `timeout`. @default 60000 */
    stallMs: z.number().int().positive().default(60_000),
    /** Longest a single tool call may run. @default 30000 */
    toolMs: z.number().int().positive().default(30_000),
  })
  .strict();

/** Per-agent context budget. */
export const contextBudgetSchema = z
  .object({
    /** Caps the model's context window further (tokens). */
    maxWindowTokens: z.number().int().positive().optional(),
    /** Output headroom below which the pre-flight guard ends the turn as `context_exhausted`. @default 256 */
    minOutputTokens: z.number().int().positive().default(256),
    /** Most history messages assembled into one request, whatever the token budget. @default 1000 */
    maxHistoryMessages: z.number().int().min(0).default(1000),
  })
  .strict();

/** The model one operation of an agent uses instead of its primary model. */
export const operationModelSchema = z
  .object({
    provider: entityIdSchema.optional(),
    model: z.string().min(1).optional(),
    timeoutMs: z.number().int().positive().optional(),
  })
  .strict();

/** Per-agent memory settings. */
export const agentMemorySchema = z
  .object({
    /**
     * Recall memories for the user message before each turn and put them into the context
     * (needs the runtime's `recall` dependency, i.e. the daemon's memory store). @default false
     */
    autoRecall: z.boolean().default(false),
    /** Longest a recall may take; a slower one is abandoned and the turn runs without memories. @default 2000 */
    recallTimeoutMs: z.number().int().min(1).max(60_000).default(2000),
  })
  .strict();

/**
 * Per-agent tool circuit breaker. After `failureThreshold` consecutive failures of one tool in
 * one session that say the tool is unhealthy (`tool_error`, `timeout`), the tool is refused in
 * that session (error kind `breaker_open`) without running; after `cooldownMs` one trial call
 * runs: success closes the breaker, failure opens it again.
 */
export const toolBreakerSchema = z
  .object({
    /** Consecutive unhealthy failures that open the breaker; 0 disables it. @default 3 */
    failureThreshold: z.number().int().min(0).max(1000).default(3),
    /** Time an open breaker refuses calls before one trial call is let through. @default 60000 */
    cooldownMs: z.number().int().min(0).max(86_400_000).default(60_000),
  })
  .strict();

/** Parsed tool breaker settings of an agent. */
export type ToolBreakerSettings = z.infer<typeof toolBreakerSchema>;

/**
 * A list of tool names or globs (`@agentd/input-guards`' syntax: `*` any run, `?` one
 * character), checked when the config is read so a bad pattern names its field.
 */
export const toolPatternsSchema = z.array(z.string().regex(TOOL_PATTERN, TOOL_PATTERN_RULE)).max(500);

/**
 * An agent definition (`agents.entries.<id>`). Unknown keys are kept, as the contract
 * allows arbitrary further configuration.
 */
export const agentDefinitionSchema = z.looseObject({
  /** Display name. */
  name: z.string().min(1).max(200),
  /** Provider id. @default 'offline' */
  provider: entityIdSchema.default('offline'),
  /** Model; the provider's first model when absent. */
  model: z.string().min(1).optional(),
  /** System prompt. */
  systemPrompt: z.string().max(200_000).default('You are a helpful assistant.'),
  /**
   * Tools allowed: tool names or globs (`*` any run, `?` one character: `memory_*`,
   * `*_read`); `*` allows every registered tool. @default []
   */
  tools: toolPatternsSchema.default([]),
  /** Tools refused to this agent on top of the global denylist (names or globs). @default [] */
  toolDenylist: toolPatternsSchema.default([]),
  /** Model calls per turn. @default 8 */
  maxSteps: z.number().int().min(1).max(100).default(8),
  /** Output limit per model call; the model's own when absent. */
  maxOutputTokens: z.number().int().positive().optional(),
  timeouts: agentTimeoutsSchema.default({ turnMs: 120_000, stallMs: 60_000, toolMs: 30_000 }),
  contextBudget: contextBudgetSchema.default({ minOutputTokens: 256, maxHistoryMessages: 1000 }),
  /** Per-operation models (`compaction`). */
  operations: z.object({ compaction: operationModelSchema.optional() }).strict().default({}),
  /** Memory settings: automatic recall before each turn. @default { autoRecall: false } */
  memory: agentMemorySchema.default({ autoRecall: false, recallTimeoutMs: 2000 }),
  /**
   * Tool circuit breaker per session and tool (`failureThreshold` 0 disables it).
   * @default { failureThreshold: 3, cooldownMs: 60000 }
   */
  toolBreaker: toolBreakerSchema.default({ failureThreshold: 3, cooldownMs: 60_000 }),
  /** A suspended agent refuses new messages. @default false */
  suspended: z.boolean().default(false),
});

/** A parsed agent definition. */
export type AgentDefinition = z.infer<typeof agentDefinitionSchema>;

/** What `agents.create` / config accept before defaults are applied. */
export type AgentDefinitionInput = z.input<typeof agentDefinitionSchema>;

/** The `agents` config section. */
export const agentsSectionSchema = z
  .object({
    /** Agent definitions by id. The built-in `default` agent exists even when absent. */
    entries: z.record(entityIdSchema, agentDefinitionSchema).default({}),
    /** Tools no agent may call, whatever it allows. Names or globs (`*_delete`). @default [] */
    toolDenylist: toolPatternsSchema.default([]),
  })
  .strict();

/** The parsed `agents` section. */
export type AgentsSection = z.infer<typeof agentsSectionSchema>;

/** The `contextEngine` config section: caps of the context window by capability class. */
export const contextEngineSectionSchema = z
  .object({
    budget: z
      .object({
        /** Window cap for `small` providers (tokens). @default 32768 */
        effectiveContextCapSmall: z.number().int().positive().default(32_768),
        /** Window cap for `nano` providers (tokens). @default 8192 */
        effectiveContextCapNano: z.number().int().positive().default(8192),
      })
      .strict()
      .default({ effectiveContextCapSmall: 32_768, effectiveContextCapNano: 8192 }),
    /** The context DAG: when compaction runs on its own and how summaries are condensed. */
    compaction: z
      .object({
        /** Compact after a turn whose uncompacted history passes `thresholdRatio` of the window. @default true */
        auto: z.boolean().default(true),
        /** Share of the context window the uncompacted history may fill before auto-compaction. @default 0.75 */
        thresholdRatio: z.number().gt(0).max(1).default(0.75),
        /** Root summaries of one depth condensed into one summary a level up. @default 4 */
        fanout: z.number().int().min(2).max(32).default(4),
        /** Share of the context window the summaries may take in a turn's context. @default 0.25 */
        summaryShare: z.number().gt(0).max(1).default(0.25),
      })
      .strict()
      .default({ auto: true, thresholdRatio: 0.75, fanout: 4, summaryShare: 0.25 }),
  })
  .strict();

/** The parsed `contextEngine` section. */
export type ContextEngineSection = z.infer<typeof contextEngineSectionSchema>;

/** The built-in offline provider id; always present unless `providers.entries.offline` replaces it. */
export const OFFLINE_PROVIDER_ID = 'offline';

/** The built-in agent id; exists without config. */
export const DEFAULT_AGENT_ID = 'default';
