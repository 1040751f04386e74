import { randomUUID } from 'node:crypto';
import type { ErrorKind } from '@agentd/contracts';
import type { Database } from '@agentd/storage';
import { z } from 'zod';
import { createAnthropicProvider, createOpenAiCompatibleProvider } from './ai-sdk-provider.js';
import {
  type AgentDefinition,
  type AgentDefinitionInput,
  type AgentsSection,
  agentDefinitionSchema,
  agentsSectionSchema,
  type ContextEngineSection,
  contextEngineSectionSchema,
  DEFAULT_AGENT_ID,
  entityIdSchema,
  OFFLINE_PROVIDER_ID,
  type Prices,
  type ProviderEntry,
  type ProvidersSection,
  providerEntrySchema,
  providersSectionSchema,
} from './config.js';
import { planBudget, resolveContextWindow, selectHistory } from './context.js';
import { AgentRuntimeError } from './errors.js';
import {
  type CacheTraceSink,
  type ContextBudget,
  digest,
  type EvidenceRolls,
  EvidenceWriter,
  EVIDENCE_SCHEMA_VERSION,
  isDegraded,
  type SessionIndexRecord,
  TRAJECTORY_DIR,
  type TrajectoryRecord,
  trajectoryFileName,
  type TurnRecallRecord,
  writeOffload,
} from '@agentd/evidence';
import { KeyedMutex } from './internal/keyed-mutex.js';
import { type CachedSession, SessionCache } from './internal/session-cache.js';
import { parseOptions } from './internal/options.js';
import { type AgentRuntimeLogger, noopLogger } from './logger.js';
import { agentRuntimeMigrations, MIGRATION_PACKAGE } from './migrations.js';
import { createOfflineProvider, type OfflineProviderOptions } from './offline-provider.js';
import { createOffloadReadTool, OFFLOAD_READ_TOOL } from './offload.js';
import {
  emptyUsage,
  type ModelFinishReason,
  type ModelMessage,
  type ModelProvider,
  type ModelToolCall,
  type ModelToolSpec,
  type ModelUsage,
} from './provider.js';
import { parseSessionKey, sessionKeySchema } from './session-key.js';
import {
  type BillingAggregate,
  type NewMessage,
  roundUsd,
  type SessionKind,
  type SessionMessage,
  type SessionRecord,
  type SessionSearchHit,
  SessionStore,
} from './session-store.js';
import { estimateMessageTokens, estimateTokens, estimateToolTokens } from './tokens.js';
import { type ToolBreakerEvent, ToolBreakers } from './tool-breaker.js';
import {
  type AgentTool,
  type EndReason,
  type EventSink,
  type FinishReason,
  noopEventSink,
  type TurnOrigin,
  type TurnRequest,
  type TurnResult,
} from './types.js';

/** Deletes the memory entries a session produced (memory-store provides it). */
export interface SessionMemory {
  deleteBySession(input: { agentId: string; sessionKey: string; purgeDerived: boolean }): Promise<number>;
}

/** Cached approval decisions of sessions (the approvals service provides it). */
export interface ApprovalCache {
  clearSession(sessionKey: string): number | Promise<number>;
}

/** What the runtime asks of automatic recall before a turn. */
export interface TurnRecallRequest {
  agentId: string;
  sessionKey: string;
  /** The user message of the turn. */
  message: string;
  tenant?: string | undefined;
  /** Aborted when the turn is cancelled or the recall exceeds the agent's `memory.recallTimeoutMs`. */
  signal?: AbortSignal | undefined;
}

/** What one recall found (the shape memory-store's `AutoRecall.recall` answers). */
export interface TurnRecallResult {
  /** Text to put before the turn, a heading line then one line per memory; absent when nothing matched. */
  context: string | undefined;
  /** The memories behind `context` (only counted here). */
  entries: readonly unknown[];
  /** How the recall ran. */
  record: {
    lanes: Array<'fts' | 'vector'>;
    ftsCandidates: number;
    vectorCandidates: number;
    reranked: boolean;
    rerankFellBack: boolean;
    degraded: boolean;
  };
}

/** Automatic recall before turns of agents with `memory.autoRecall` (memory-store's `createAutoRecall` provides it). */
export interface TurnRecall {
  recall(request: TurnRecallRequest): Promise<TurnRecallResult>;
  /** Drops per-session recall state when a session is deleted or reset. */
  forget?(sessionKey: string): void;
}

/** Builds a provider from its config entry and resolved API key (tests and embedders replace it). */
export type ProviderFactory = (id: string, entry: ProviderEntry, apiKey: string | undefined) => ModelProvider;

/** Options of {@link createAgentRuntime}. */
export interface AgentRuntimeOptions {
  /** The shared libsql database; the runtime applies its migrations on `start()`. */
  db: Database;
  /** Data directory; evidence goes to `<dataDir>/obs/`. */
  dataDir: string;
  /** The `agents` config section. @default {} (only the built-in `default` agent) */
  agents?: z.input<typeof agentsSectionSchema>;
  /** The `providers` config section. @default {} (only the built-in `offline` provider) */
  providers?: z.input<typeof providersSectionSchema>;
  /** The `contextEngine` config section. @default {} */
  contextEngine?: z.input<typeof contextEngineSectionSchema>;
  /** Tools available to agents (each agent still chooses with `tools`). @default [] */
  tools?: AgentTool[];
  /**
   * Resolves a `${secret:NAME}` reference's NAME to its value; `undefined` means missing.
   * @default reads `process.env[NAME]`
   */
  resolveSecret?: (name: string) => string | undefined | Promise<string | undefined>;
  /**
   * Persists agent definition changes (a patch of `agents.entries`: a value merges into the
   * entry, `null` removes it). The daemon writes them to config.yaml. @default kept in memory only
   */
  persistAgents?: (entries: Record<string, Partial<AgentDefinitionInput> | null>) => Promise<void>;
  /** Options of the built-in offline provider (tests script it). @default {} */
  offline?: OfflineProviderOptions;
  /** Replaces how providers are built from config. @default the offline, OpenAI-compatible and Anthropic providers */
  providerFactory?: ProviderFactory;
  /** Memory deletion for session.delete and session.reset_conversation. @default none */
  memory?: SessionMemory;
  /** Approval cache cleared by session.reset. @default none */
  approvals?: ApprovalCache;
  /** Automatic recall for agents with `memory.autoRecall: true`. @default none (no agent recalls) */
  recall?: TurnRecall | undefined;
  /** Sessions whose context tail is kept in memory between turns (0 disables). @default 64 */
  sessionCacheSize?: number;
  /** Event bus. @default no-op */
  events?: EventSink;
  /**
   * Receives one prompt-cache record per model call (the daemon writes them to
   * `logs/cache-trace.jsonl`). @default none (no cache trace)
   */
  cacheTrace?: CacheTraceSink | undefined;
  /**
   * Rotation of the evidence files (`observability.logRotation`): a session-index day file
   * rolls at `maxSizeBytes`, `maxFiles` rolled parts are kept per day and per session.
   * @default { maxSizeBytes: 52428800, maxFiles: 5 }
   */
  evidenceRotation?: { maxSizeBytes?: number; maxFiles?: number } | undefined;
  /** Logger. @default no-op */
  logger?: AgentRuntimeLogger;
  /** Clock (epoch ms). @default Date.now */
  now?: () => number;
  /** Id generator for trace ids. @default crypto.randomUUID */
  randomId?: () => string;
}

const optionsSchema = z.object({
  db: z.custom<Database>((value) => typeof value === 'object' && value !== null, 'a Database'),
  dataDir: z.string().min(1),
  agents: agentsSectionSchema.default({ entries: {}, toolDenylist: [] }),
  providers: providersSectionSchema.default({ entries: {} }),
  contextEngine: contextEngineSectionSchema.default({
    budget: { effectiveContextCapSmall: 32_768, effectiveContextCapNano: 8192 },
  }),
  tools: z.array(z.custom<AgentTool>()).default([]),
  resolveSecret: z.function().optional(),
  persistAgents: z.function().optional(),
  offline: z.custom<OfflineProviderOptions>().default({}),
  providerFactory: z.function().optional(),
  memory: z.custom<SessionMemory>().optional(),
  approvals: z.custom<ApprovalCache>().optional(),
  recall: z
    .custom<TurnRecall>(
      (value) =>
        typeof value === 'object' &&
        value !== null &&
        typeof (value as { recall?: unknown }).recall === 'function',
      'an object with a recall(request) function',
    )
    .optional(),
  sessionCacheSize: z.number().int().min(0).default(64),
  events: z.custom<EventSink>().optional(),
  cacheTrace: z
    .custom<CacheTraceSink>(
      (value) =>
        typeof value === 'object' &&
        value !== null &&
        typeof (value as { append?: unknown }).append === 'function',
      'an object with an append(record) function',
    )
    .optional(),
  evidenceRotation: z
    .object({
      maxSizeBytes: z.number().int().positive().optional(),
      maxFiles: z.number().int().min(0).optional(),
    })
    .loose()
    .optional(),
  logger: z.custom<AgentRuntimeLogger>().optional(),
  now: z.function().optional(),
  randomId: z.function().optional(),
});

const turnRequestSchema = z.object({
  agentId: entityIdSchema.optional(),
  message: z.string().min(1).max(1_000_000),
  sessionKey: sessionKeySchema.optional(),
  model: z.string().min(1).max(200).optional(),
  timeoutMs: z.number().int().positive().optional(),
  origin: z.enum(['rpc', 'hook', 'cron', 'graph', 'heartbeat', 'subagent']).optional(),
  channelType: z.string().min(1).max(64).optional(),
  traceId: z.string().min(1).max(128).optional(),
  synthetic: z.boolean().optional(),
  allowedTools: z.array(z.string().min(1)).optional(),
});

/** The built-in offline provider entry. */
const OFFLINE_ENTRY: ProviderEntry = providerEntrySchema.parse({
  type: 'offline',
  models: ['offline'],
  contextWindow: 8192,
  maxOutputTokens: 1024,
});

/** The built-in `default` agent. */
const DEFAULT_AGENT: AgentDefinition = agentDefinitionSchema.parse({
  name: 'default',
  provider: OFFLINE_PROVIDER_ID,
});

const KIND_BY_ORIGIN: Record<TurnOrigin, SessionKind> = {
  rpc: 'main',
  heartbeat: 'main',
  hook: 'hook',
  cron: 'cron',
  graph: 'graph',
  subagent: 'subagent',
};

const CHANNEL_BY_ORIGIN: Record<TurnOrigin, string> = {
  rpc: 'webchat',
  heartbeat: 'heartbeat',
  hook: 'webhook',
  cron: 'cron',
  graph: 'graph',
  subagent: 'subagent',
};

/** Session key used when a turn names none. */
export const DEFAULT_SESSION_KEY = 'default:webchat:anonymous';

/** Longest tool result (characters of JSON) handed back to the model. */
const MAX_TOOL_RESULT_CHARS = 100_000;
/** Rows read per history page while assembling context. */
const HISTORY_PAGE = 128;

/** An agent as `agents.get` shows it. */
export type AgentView = AgentDefinition & { agentId: string; builtIn: boolean };

/** A provider as `models.list` shows it: never a key or header. */
export interface ProviderView {
  id: string;
  type: ProviderEntry['type'];
  offline: boolean;
  baseUrl?: string;
  apiKeyConfigured: boolean;
  capabilityClass?: string;
  contextWindow: number;
  maxOutputTokens: number;
  models: ModelView[];
}

/** A model as `models.list` shows it. */
export interface ModelView {
  id: string;
  provider: string;
  model: string;
  capabilityClass?: string;
  contextWindow: number;
  maxOutputTokens: number;
  prices: Prices;
}

/** The export record of a session (contract: "Session export record"). */
export interface SessionExport {
  sessionKey: string;
  messages: SessionMessage[];
  metadata: Record<string, unknown> & { agentId: string; channelType: string };
  messageCount: number;
  createdAt: number;
  updatedAt: number;
}

/** Result of `agents.update`. */
export interface AgentUpdateResult {
  agentId: string;
  updated: boolean;
  dryRun: boolean;
  agent: AgentView;
  /** Whether the provider was probed (only when it changed). */
  providerProbed: boolean;
}

/** The agent runtime. */
export interface AgentRuntime {
  /** Applies migrations; call once before anything else. */
  start(): Promise<void>;
  /** Runs one turn (serialised per session, parallel across sessions). */
  runTurn(request: TurnRequest): Promise<TurnResult>;
  /** Adds tools; a name already registered throws `INVALID_OPTIONS`. */
  registerTools(tools: AgentTool[]): void;
  /** Names of the registered tools. */
  toolNames(): string[];
  /** Replaces agents, providers and context caps from a new config (hot reload). */
  applyConfig(config: {
    agents?: z.input<typeof agentsSectionSchema>;
    providers?: z.input<typeof providersSectionSchema>;
    contextEngine?: z.input<typeof contextEngineSectionSchema>;
  }): void;
  readonly agents: {
    list(): string[];
    get(agentId: string): AgentView;
    create(input: Record<string, unknown>): Promise<AgentView>;
    update(
      agentId: string,
      patch: Record<string, unknown>,
      options?: { dryRun?: boolean },
    ): Promise<AgentUpdateResult>;
    delete(agentId: string): Promise<{ agentId: string; deleted: true }>;
    suspend(agentId: string): Promise<{ agentId: string; suspended: true; inFlight: number }>;
    resume(agentId: string): Promise<{ agentId: string; resumed: true }>;
    operationModels(agentId: string): OperationModels;
  };
  /** Configured providers and models, without keys. */
  models(): { providers: ProviderView[]; models: ModelView[] };
  /** Prompt-cache figures from billing. */
  cacheStats(agentId?: string): Promise<Record<string, unknown>>;
  readonly sessions: {
    status(sessionKey: string): Promise<Record<string, unknown>>;
    history(
      sessionKey: string,
      options?: { limit?: number; beforeTs?: number },
    ): Promise<{ sessionKey: string; messages: SessionMessage[]; summary?: string }>;
    list(options?: {
      sinceMs?: number;
      kind?: SessionKind;
      limit?: number;
    }): Promise<Array<Record<string, unknown>>>;
    export(sessionKey: string): Promise<SessionExport>;
    delete(
      sessionKey: string,
    ): Promise<{ sessionKey: string; deleted: true; transcript: SessionExport; memoriesDeleted?: number }>;
    reset(sessionKey: string): Promise<{ sessionKey: string; reset: true; previousMessageCount: number }>;
    resetConversation(
      sessionKey: string,
      options?: { memory?: boolean; purgeDerived?: boolean },
    ): Promise<ResetConversationResult>;
    search(query: string, limit?: number): Promise<SessionSearchHit[]>;
    compact(sessionKey: string): Promise<CompactResult>;
  };
  readonly billing: {
    total(sinceMs?: number): Promise<BillingAggregate>;
    byAgent(agentId: string, sinceMs?: number): Promise<BillingAggregate>;
    bySession(sessionKey: string, sinceMs?: number): Promise<BillingAggregate>;
    byProvider(sinceMs?: number): Promise<{
      providers: Array<{
        provider: string;
        inputTokens: number;
        outputTokens: number;
        estimatedCostUsd: number;
      }>;
    }>;
    usage24h(): Promise<Array<{ hour: number; tokens: number }>>;
  };
  /** Turns running now. */
  readonly inFlight: number;
  /** Roll counts of the evidence files this runtime writes (for the obs readers in the same process). */
  readonly evidenceRolls: EvidenceRolls;
  /** Waits for running turns and evidence writes; later turns are refused with `CLOSED`. */
  close(): Promise<void>;
}

/** Result of `session.reset_conversation`. */
export interface ResetConversationResult {
  sessionKey: string;
  lcdRowsDeleted: number;
  sessionMessagesCleared: number;
  memoriesDeleted?: number;
  runtimeSessionDestroyed?: boolean;
}

/** Result of `session.compact`. */
export interface CompactResult {
  sessionKey: string;
  compacted: boolean;
  /** Messages now represented by the summary. */
  messagesSummarized: number;
  /** Messages kept verbatim after the summary. */
  keptMessages: number;
  summaryTokens: number;
  tokensUsed: { input: number; output: number; total: number };
  reason?: string;
}

/** Result of `agent.getOperationModels`. */
export interface OperationModels {
  agentId: string;
  primaryModel: string;
  providerFamily: string;
  tieringActive: boolean;
  operations: Array<{
    operationType: string;
    model: string;
    provider: string;
    source: 'config' | 'default';
    tieringActive: boolean;
    timeoutMs: number;
    crossProvider: boolean;
    apiKeyConfigured: boolean;
  }>;
}

interface ResolvedModel {
  providerId: string;
  entry: ProviderEntry;
  model: string;
  contextWindow: number;
  maxOutputTokens: number;
  prices: Prices;
}

interface ToolOutcome {
  message: NewMessage;
  record: TrajectoryRecord;
  ok: boolean;
}

/** Creates the agent runtime. Call `start()` before use. */
export function createAgentRuntime(options: AgentRuntimeOptions): AgentRuntime {
  const parsed = parseOptions(optionsSchema, options, 'createAgentRuntime');
  const db = parsed.db;
  const logger = parsed.logger ?? noopLogger;
  const events = parsed.events ?? noopEventSink;
  const now = (parsed.now as (() => number) | undefined) ?? Date.now;
  const randomId = (parsed.randomId as (() => string) | undefined) ?? randomUUID;
  const resolveSecret =
    (parsed.resolveSecret as AgentRuntimeOptions['resolveSecret']) ?? ((name: string) => process.env[name]);
  const persistAgents = parsed.persistAgents as AgentRuntimeOptions['persistAgents'];
  const providerFactory = (parsed.providerFactory as ProviderFactory | undefined) ?? defaultProviderFactory;
  const memory = parsed.memory;
  const approvals = parsed.approvals;
  const recall = parsed.recall;
  const cacheTrace = parsed.cacheTrace;
  // Set after a cache-trace append failed, so a broken sink warns once rather than per model call.
  let cacheTraceFailing = false;
  const breakers = new ToolBreakers();
  const store = new SessionStore(db);
  const evidence = new EvidenceWriter(parsed.dataDir, logger, {
    ...(parsed.evidenceRotation
      ? {
          rotation: {
            ...(parsed.evidenceRotation.maxSizeBytes === undefined
              ? {}
              : { maxSizeBytes: parsed.evidenceRotation.maxSizeBytes }),
            ...(parsed.evidenceRotation.maxFiles === undefined
              ? {}
              : { maxFiles: parsed.evidenceRotation.maxFiles }),
          },
        }
      : {}),
  });
  const locks = new KeyedMutex();
  const cache = new SessionCache(parsed.sessionCacheSize);
  const tools = new Map<string, AgentTool>();
  const toolSchemas = new Map<string, Record<string, unknown>>();
  const running = new Map<string, number>();
  const turnsInFlight = new Set<Promise<unknown>>();
  let closed = false;

  let agentsSection: AgentsSection = parsed.agents;
  let providersSection: ProvidersSection = parsed.providers;
  let contextEngine: ContextEngineSection = parsed.contextEngine;
  const providerCache = new Map<string, { fingerprint: string; provider: ModelProvider }>();

  // Built in: paging through the session's own offloaded results (offered only where `tools` allow it).
  addTool(createOffloadReadTool(parsed.dataDir) as AgentTool);
  for (const tool of parsed.tools) addTool(tool);

  function defaultProviderFactory(
    id: string,
    entry: ProviderEntry,
    apiKey: string | undefined,
  ): ModelProvider {
    const common = {
      id,
      baseUrl: entry.baseUrl,
      apiKey,
      headers: entry.headers,
      timeoutMs: entry.timeoutMs,
      maxRetries: entry.maxRetries,
      retryInitialDelayMs: entry.retryInitialDelayMs,
      logger,
    };
    switch (entry.type) {
      case 'offline':
        return createOfflineProvider({ ...parsed.offline, id });
      case 'openai-compatible':
        return createOpenAiCompatibleProvider(common);
      case 'anthropic':
        return createAnthropicProvider(common);
    }
  }

  function addTool(tool: AgentTool): void {
    if (!tool || typeof tool.name !== 'string' || !/^[A-Za-z0-9_.-]{1,64}$/.test(tool.name)) {
      throw new AgentRuntimeError(
        'INVALID_OPTIONS',
        `registerTools: invalid tool name ${JSON.stringify(tool?.name)}`,
      );
    }
    if (tools.has(tool.name)) {
      throw new AgentRuntimeError('INVALID_OPTIONS', `registerTools: tool already registered: ${tool.name}`);
    }
    let schema: Record<string, unknown>;
    try {
      schema = z.toJSONSchema(tool.params, { io: 'input', unrepresentable: 'any' }) as Record<
        string,
        unknown
      >;
    } catch (error) {
      throw new AgentRuntimeError(
        'INVALID_OPTIONS',
        `registerTools: ${tool.name}: params cannot be expressed as JSON Schema`,
        {
          cause: error,
        },
      );
    }
    delete schema.$schema;
    tools.set(tool.name, tool);
    toolSchemas.set(tool.name, schema);
  }

  // ---------------------------------------------------------------- agents and providers

  function agentEntries(): Map<string, AgentDefinition> {
    const entries = new Map(Object.entries(agentsSection.entries));
    if (!entries.has(DEFAULT_AGENT_ID)) entries.set(DEFAULT_AGENT_ID, DEFAULT_AGENT);
    return entries;
  }

  function findAgent(agentId: string): AgentDefinition | undefined {
    return agentsSection.entries[agentId] ?? (agentId === DEFAULT_AGENT_ID ? DEFAULT_AGENT : undefined);
  }

  function requireAgent(agentId: string): AgentDefinition {
    const agent = findAgent(agentId);
    if (!agent)
      throw new AgentRuntimeError('AGENT_NOT_FOUND', `Agent not found: ${agentId}`, { data: { agentId } });
    return agent;
  }

  function view(agentId: string, agent: AgentDefinition): AgentView {
    return { ...agent, agentId, builtIn: agentsSection.entries[agentId] === undefined };
  }

  function providerEntry(providerId: string): ProviderEntry | undefined {
    return (
      providersSection.entries[providerId] ?? (providerId === OFFLINE_PROVIDER_ID ? OFFLINE_ENTRY : undefined)
    );
  }

  function providerEntries(): Map<string, ProviderEntry> {
    const entries = new Map(Object.entries(providersSection.entries));
    if (!entries.has(OFFLINE_PROVIDER_ID)) entries.set(OFFLINE_PROVIDER_ID, OFFLINE_ENTRY);
    return entries;
  }

  function modelIds(entry: ProviderEntry): string[] {
    return entry.models.map((model) => (typeof model === 'string' ? model : model.id));
  }

  function resolveModel(
    agent: AgentDefinition,
    override: string | undefined,
    operation?: { provider?: string | undefined; model?: string | undefined },
  ): ResolvedModel {
    let providerId = operation?.provider ?? agent.provider;
    let model = operation?.model ?? (operation?.provider ? undefined : agent.model);
    if (override) {
      const slash = override.indexOf('/');
      const prefix = slash > 0 ? override.slice(0, slash) : undefined;
      if (prefix && providerEntry(prefix)) {
        providerId = prefix;
        model = override.slice(slash + 1);
      } else {
        model = override;
      }
    }
    const entry = providerEntry(providerId);
    if (!entry) {
      throw new AgentRuntimeError('PROVIDER_NOT_FOUND', `Provider not found: ${providerId}`, {
        data: { provider: providerId },
      });
    }
    model ??= modelIds(entry)[0];
    if (!model) {
      throw new AgentRuntimeError(
        'PROVIDER_NOT_FOUND',
        `Provider ${providerId} lists no models; set the agent's model or providers.entries.${providerId}.models`,
        { data: { provider: providerId } },
      );
    }
    const detail = entry.models.find((candidate) => typeof candidate !== 'string' && candidate.id === model);
    const own = typeof detail === 'object' ? detail : undefined;
    return {
      providerId,
      entry,
      model,
      contextWindow: own?.contextWindow ?? entry.contextWindow,
      maxOutputTokens: own?.maxOutputTokens ?? entry.maxOutputTokens,
      prices: own?.prices ?? entry.prices,
    };
  }

  async function resolveApiKey(providerId: string, entry: ProviderEntry): Promise<string | undefined> {
    if (!entry.apiKey) return undefined;
    const match = /^\$\{secret:([A-Za-z0-9_][A-Za-z0-9_.\-/]{0,127})\}$/.exec(entry.apiKey);
    if (!match) return entry.apiKey;
    const name = match[1] ?? '';
    const value = await resolveSecret(name);
    if (value === undefined || value === '') {
      throw new AgentRuntimeError(
        'SECRET_MISSING',
        `Provider ${providerId}: secret ${name} is not set (referenced at providers.entries.${providerId}.apiKey)`,
        { data: { provider: providerId, name } },
      );
    }
    return value;
  }

  async function getProvider(providerId: string, entry: ProviderEntry): Promise<ModelProvider> {
    const fingerprint = JSON.stringify(entry);
    const cached = providerCache.get(providerId);
    if (cached && cached.fingerprint === fingerprint) return cached.provider;
    const apiKey = await resolveApiKey(providerId, entry);
    const provider = providerFactory(providerId, entry, apiKey);
    providerCache.set(providerId, { fingerprint, provider });
    return provider;
  }

  function toolAllowed(
    agent: AgentDefinition,
    name: string,
    narrowed: readonly string[] | undefined,
  ): boolean {
    const matches = (pattern: string) =>
      pattern === '*' || pattern === name || (pattern.endsWith('*') && name.startsWith(pattern.slice(0, -1)));
    if (agentsSection.toolDenylist.some(matches) || agent.toolDenylist.some(matches)) return false;
    if (narrowed && !narrowed.some(matches)) return false;
    return agent.tools.some(matches);
  }

  function offeredTools(agent: AgentDefinition, narrowed: readonly string[] | undefined): ModelToolSpec[] {
    const specs: ModelToolSpec[] = [];
    for (const [name, tool] of tools) {
      if (!toolAllowed(agent, name, narrowed)) continue;
      specs.push({ name, description: tool.description, inputSchema: toolSchemas.get(name) ?? {} });
    }
    return specs;
  }

  function costOf(usage: ModelUsage, prices: Prices): { costUsd: number; cacheSavedUsd: number } {
    const readPrice = prices.cacheReadPerMillion ?? prices.inputPerMillion;
    const writePrice = prices.cacheWritePerMillion ?? prices.inputPerMillion;
    const uncached = Math.max(0, usage.inputTokens - usage.cacheReadTokens - usage.cacheWriteTokens);
    const cost =
      (uncached * prices.inputPerMillion +
        usage.cacheReadTokens * readPrice +
        usage.cacheWriteTokens * writePrice +
        usage.outputTokens * prices.outputPerMillion) /
      1_000_000;
    const saved = (usage.cacheReadTokens * Math.max(0, prices.inputPerMillion - readPrice)) / 1_000_000;
    return { costUsd: roundUsd(cost), cacheSavedUsd: roundUsd(saved) };
  }

  // ---------------------------------------------------------------- the turn

  async function runTurn(request: TurnRequest): Promise<TurnResult> {
    if (closed) throw new AgentRuntimeError('CLOSED', 'The agent runtime is closed');
    const input = parseOptions(turnRequestSchema, request, 'runTurn');
    const sessionKey = input.sessionKey ?? DEFAULT_SESSION_KEY;
    // Refuse early when the named agent is unknown or suspended, before queueing behind other turns.
    if (input.agentId) {
      const agent = findAgent(input.agentId);
      if (agent?.suspended) throw suspendedError(input.agentId);
    }
    const turn = locks.run(sessionKey, () => turnLocked(request, input, sessionKey));
    turnsInFlight.add(turn);
    void turn.then(
      () => turnsInFlight.delete(turn),
      () => turnsInFlight.delete(turn),
    );
    return turn;
  }

  function suspendedError(agentId: string): AgentRuntimeError {
    return new AgentRuntimeError(
      'AGENT_SUSPENDED',
      `Agent suspended: ${agentId}; it accepts no new messages until resumed`,
      {
        data: { agentId },
      },
    );
  }

  async function turnLocked(
    request: TurnRequest,
    input: z.output<typeof turnRequestSchema>,
    sessionKey: string,
  ): Promise<TurnResult> {
    const startedAt = now();
    const traceId = input.traceId ?? randomId();
    const origin: TurnOrigin = input.origin ?? 'rpc';
    const session = cache.get(sessionKey)?.session ?? (await store.get(sessionKey));
    if (session && input.agentId && input.agentId !== session.agentId) {
      throw new AgentRuntimeError(
        'SESSION_AGENT_MISMATCH',
        `Session ${sessionKey} belongs to agent ${session.agentId}, not ${input.agentId}`,
        { data: { sessionKey, agentId: session.agentId } },
      );
    }
    const agentId = session?.agentId ?? input.agentId ?? DEFAULT_AGENT_ID;
    const agent = findAgent(agentId);
    if (!agent) {
      if (session) {
        throw new AgentRuntimeError(
          'AGENT_DELETED',
          `Agent deleted: ${agentId}; session ${sessionKey} keeps its history but takes no new turns`,
          { data: { agentId, sessionKey } },
        );
      }
      throw new AgentRuntimeError('AGENT_NOT_FOUND', `Agent not found: ${agentId}`, { data: { agentId } });
    }
    if (agent.suspended) throw suspendedError(agentId);

    const resolved = resolveModel(agent, input.model);
    const provider = await getProvider(resolved.providerId, resolved.entry);
    running.set(agentId, (running.get(agentId) ?? 0) + 1);
    try {
      return await executeTurn({
        request,
        input,
        sessionKey,
        session,
        agentId,
        agent,
        resolved,
        provider,
        traceId,
        origin,
        startedAt,
      });
    } finally {
      const left = (running.get(agentId) ?? 1) - 1;
      if (left <= 0) running.delete(agentId);
      else running.set(agentId, left);
    }
  }

  async function executeTurn(turn: {
    request: TurnRequest;
    input: z.output<typeof turnRequestSchema>;
    sessionKey: string;
    session: SessionRecord | undefined;
    agentId: string;
    agent: AgentDefinition;
    resolved: ResolvedModel;
    provider: ModelProvider;
    traceId: string;
    origin: TurnOrigin;
    startedAt: number;
  }): Promise<TurnResult> {
    const {
      request,
      input,
      sessionKey,
      session,
      agentId,
      agent,
      resolved,
      provider,
      traceId,
      origin,
      startedAt,
    } = turn;
    const base = { v: EVIDENCE_SCHEMA_VERSION, sessionKey, traceId, agentId } as const;
    const trajectory: TrajectoryRecord[] = [
      {
        ...base,
        ts: startedAt,
        type: 'turn_start',
        origin,
        provider: resolved.providerId,
        model: resolved.model,
      },
    ];

    // Timers: makespan for the whole turn, stall for silence of the model stream.
    const controller = new AbortController();
    let stopCause: 'timeout' | 'cancelled' | undefined;
    const stop = (cause: 'timeout' | 'cancelled') => {
      if (stopCause) return;
      stopCause = cause;
      controller.abort(new AgentRuntimeError('PROVIDER_ERROR', `turn ${cause}`));
    };
    const makespanMs = input.timeoutMs ?? agent.timeouts.turnMs;
    const makespan = setTimeout(() => stop('timeout'), makespanMs);
    let stall: NodeJS.Timeout | undefined;
    const armStall = () => {
      clearTimeout(stall);
      stall = setTimeout(() => stop('timeout'), agent.timeouts.stallMs);
    };
    const outer = request.signal;
    const onOuterAbort = () => stop('cancelled');
    if (outer?.aborted) stop('cancelled');
    else outer?.addEventListener('abort', onOuterAbort, { once: true });

    const window = resolveContextWindow({
      rawContextWindowTokens: resolved.contextWindow,
      capabilityClass: resolved.entry.capabilities.capabilityClass,
      effectiveContextCapSmall: contextEngine.budget.effectiveContextCapSmall,
      effectiveContextCapNano: contextEngine.budget.effectiveContextCapNano,
      agentMaxWindowTokens: agent.contextBudget.maxWindowTokens,
    });
    const offered = offeredTools(agent, input.allowedTools);
    let system = agent.systemPrompt;
    if (session?.summary) system += `\n\nSummary of the earlier conversation:\n${session.summary}`;
    const toolTokens = estimateToolTokens(offered);
    let systemTokens = estimateTokens(system) + toolTokens;
    const maxOutputTokens = Math.min(
      agent.maxOutputTokens ?? resolved.maxOutputTokens,
      resolved.maxOutputTokens,
    );

    const userMessage: NewMessage = {
      role: 'user',
      content: input.message,
      tokens: estimateMessageTokens({ role: 'user', content: input.message }),
    };
    const turnMessages: NewMessage[] = [userMessage];
    const tail: ModelMessage[] = [{ role: 'user', content: input.message }];
    let tailTokens = userMessage.tokens;

    // Recalled memories join the system side, but only in room history would otherwise get:
    // they never squeeze the system prompt, the message or the output headroom.
    let recallEvidence: TurnRecallRecord | undefined;
    if (recall && agent.memory.autoRecall) {
      const recalled = await recallBeforeTurn(
        agent,
        agentId,
        sessionKey,
        traceId,
        input.message,
        controller.signal,
      );
      recallEvidence = recalled.evidence;
      if (recalled.context) {
        const room = planBudget({
          windowTokens: window.windowTokens,
          systemTokens,
          freshTailTokens: tailTokens,
          maxOutputTokens,
          minOutputTokens: agent.contextBudget.minOutputTokens,
        }).historyBudget;
        const block = fitRecallBlock(recalled.context, room);
        if (block) {
          system += `\n\n${block}`;
          const withBlock = estimateTokens(system) + toolTokens;
          recallEvidence.injectedTokens = withBlock - systemTokens;
          systemTokens = withBlock;
        }
      }
    }

    // History: the newest messages that fit the first step's budget (later steps only trim).
    const firstPlan = planBudget({
      windowTokens: window.windowTokens,
      systemTokens,
      freshTailTokens: tailTokens,
      maxOutputTokens,
      minOutputTokens: agent.contextBudget.minOutputTokens,
    });
    let history: SessionMessage[] = [];
    let historyTokens = 0;
    const cached: CachedSession | undefined = session
      ? (cache.get(sessionKey) ?? { session, messages: [], fromSeq: session.nextSeq })
      : undefined;
    if (session && cached && firstPlan.historyBudget > 0 && agent.contextBudget.maxHistoryMessages > 0) {
      const maxMessages = agent.contextBudget.maxHistoryMessages;
      const budget = firstPlan.historyBudget;
      const collected: SessionMessage[] = [];
      let collectedTokens = 0;
      let index = cached.messages.length - 1;
      for (;;) {
        for (; index >= 0 && collected.length < maxMessages && collectedTokens < budget; index--) {
          const message = cached.messages[index] as SessionMessage;
          collected.push(message);
          collectedTokens += message.tokens;
        }
        if (collected.length >= maxMessages || collectedTokens >= budget) break;
        if (cached.fromSeq <= session.compactedBeforeSeq) break;
        // The cache does not reach back far enough: page older messages in from the database.
        const want = Math.min(HISTORY_PAGE, maxMessages - collected.length);
        const page = await store.loadTail(session, cached.fromSeq, want);
        const oldest = page.at(-1);
        cached.fromSeq = page.length < want || !oldest ? session.compactedBeforeSeq : oldest.seq;
        if (page.length === 0) break;
        cached.messages.unshift(...[...page].reverse());
        index = page.length - 1;
      }
      ({ kept: history, tokens: historyTokens } = selectHistory(collected, budget));
    }

    const usage = emptyUsage();
    let steps = 0;
    let response = '';
    let finishReason: FinishReason = 'stop';
    let endReason: EndReason = 'completed';
    let toolOk = 0;
    let toolFailed = 0;
    let toolSeq = 0;
    let failure: unknown;
    let lastText = '';
    // Text of the step being streamed, kept outside the loop so a timeout or cancel can keep it.
    let streaming = '';

    try {
      for (let step = 1; step <= agent.maxSteps; step++) {
        const plan = planBudget({
          windowTokens: window.windowTokens,
          systemTokens,
          freshTailTokens: tailTokens,
          maxOutputTokens,
          minOutputTokens: agent.contextBudget.minOutputTokens,
        });
        if (historyTokens > plan.historyBudget) {
          ({ kept: history, tokens: historyTokens } = selectHistory(
            [...history].reverse(),
            plan.historyBudget,
          ));
        }
        const budget: ContextBudget = {
          ...window,
          systemTokens,
          freshTailTokens: tailTokens,
          budgetedHistoryTokens: historyTokens,
          keptCount: history.length,
          assembledInputTokens: systemTokens + tailTokens + historyTokens,
          outputHeadroom: plan.outputHeadroom,
          verdict: plan.verdict,
          ...(recallEvidence ? { recallTokens: recallEvidence.injectedTokens } : {}),
        };
        trajectory.push({ ...base, ts: now(), type: 'context_budget', step, budget });
        if (plan.verdict === 'exhausted') {
          endReason = 'context_exhausted';
          finishReason = 'length';
          break;
        }

        steps = step;
        let stepText = '';
        streaming = '';
        const calls: ModelToolCall[] = [];
        let stepFinish: ModelFinishReason = 'other';
        armStall();
        for await (const event of provider.stream({
          model: resolved.model,
          system,
          messages: [...history.map(toModelMessage), ...tail],
          tools: offered,
          maxOutputTokens: plan.outputHeadroom,
          signal: controller.signal,
          purpose: 'chat',
        })) {
          armStall();
          if (event.type === 'text-delta') {
            stepText += event.text;
            streaming = stepText;
            request.onEvent?.({ type: 'delta', text: event.text, step });
          } else if (event.type === 'tool-call') {
            calls.push({ toolCallId: event.toolCallId, toolName: event.toolName, input: event.input });
            request.onEvent?.({
              type: 'tool-call',
              toolName: event.toolName,
              toolCallId: event.toolCallId,
              step,
            });
          } else {
            stepFinish = event.finishReason;
            addUsage(usage, event.usage);
            traceCache(base, resolved, step, event.usage);
          }
        }
        clearTimeout(stall);
        streaming = '';
        if (stepText) lastText = stepText;

        const assistant: NewMessage = {
          role: 'assistant',
          content: stepText,
          ...(calls.length > 0 ? { toolCalls: calls } : {}),
          tokens: 0,
        };
        assistant.tokens = estimateMessageTokens(toModelMessage(assistant));
        turnMessages.push(assistant);
        tail.push(toModelMessage(assistant));
        tailTokens += assistant.tokens;

        if (calls.length > 0) {
          // Every call gets its result, even at the step limit, so the stored history stays valid.
          for (const call of calls) {
            const outcome = await runTool(
              agent,
              input.allowedTools,
              agentId,
              sessionKey,
              traceId,
              call,
              step,
              ++toolSeq,
              controller.signal,
            );
            if (outcome.ok) toolOk++;
            else toolFailed++;
            trajectory.push(outcome.record);
            turnMessages.push(outcome.message);
            tail.push(toModelMessage(outcome.message));
            tailTokens += outcome.message.tokens;
            request.onEvent?.({
              type: 'tool-result',
              toolName: call.toolName,
              toolCallId: call.toolCallId,
              ok: outcome.ok,
              durationMs: (outcome.record as { durationMs: number }).durationMs,
              step,
            });
          }
          if (stopCause) break;
          if (step === agent.maxSteps) {
            endReason = 'max_steps';
            finishReason = 'tool_calls';
            response = lastText;
          }
          continue;
        }

        response = stepText || lastText;
        if (stepFinish === 'length') {
          endReason = 'output_starved';
          finishReason = 'length';
        } else if (stepFinish === 'content_filter') {
          finishReason = 'content_filter';
        } else if (stepFinish === 'error') {
          endReason = 'error';
          finishReason = 'error';
        } else {
          finishReason = 'stop';
        }
        break;
      }
    } catch (error) {
      clearTimeout(stall);
      if (!stopCause) failure = error;
    } finally {
      clearTimeout(makespan);
      clearTimeout(stall);
      outer?.removeEventListener('abort', onOuterAbort);
    }

    if (stopCause) {
      endReason = stopCause;
      finishReason = stopCause;
      if (streaming) lastText = streaming;
      response = lastText;
      // Keep a partial answer: the next turn should see what the user already saw streamed.
      const last = turnMessages.at(-1);
      if (lastText && !(last?.role === 'assistant' && last.content === lastText)) {
        const partial: NewMessage = { role: 'assistant', content: lastText, tokens: 0 };
        partial.tokens = estimateMessageTokens(toModelMessage(partial));
        turnMessages.push(partial);
      }
    } else if (failure !== undefined) {
      endReason = 'error';
      finishReason = 'error';
    }
    if (endReason === 'completed' && toolFailed > 0) endReason = 'completed_with_tool_errors';
    dropDanglingToolCalls(turnMessages);

    const finishedAt = now();
    const { costUsd, cacheSavedUsd } = costOf(usage, resolved.prices);
    const kind = session?.kind ?? KIND_BY_ORIGIN[origin];
    const channelType = session?.channelType ?? input.channelType ?? CHANNEL_BY_ORIGIN[origin];
    const firstSeq = session?.nextSeq ?? 1;
    const committed = await store.commitTurn({
      sessionKey,
      agentId,
      channelType,
      kind,
      now: finishedAt,
      messages: turnMessages,
      traceId,
      steps,
      provider: resolved.providerId,
      model: resolved.model,
      usage,
      costUsd,
      cacheSavedUsd,
    });

    rememberTail(
      sessionKey,
      committed,
      cached,
      turnMessages,
      firstSeq,
      finishedAt,
      traceId,
      window.windowTokens,
      agent,
    );

    const tokens = {
      input: usage.inputTokens,
      output: usage.outputTokens,
      total: usage.inputTokens + usage.outputTokens,
      cacheRead: usage.cacheReadTokens,
      cacheWrite: usage.cacheWriteTokens,
    };
    const durationMs = finishedAt - startedAt;
    const toolCalls = { ok: toolOk, failed: toolFailed };
    trajectory.push({
      ...base,
      ts: finishedAt,
      type: 'turn_end',
      endReason,
      finishReason,
      steps,
      durationMs,
      tokens,
      costUsd,
      toolCalls,
    });
    const degraded = isDegraded(endReason);
    const errorCode =
      failure instanceof AgentRuntimeError ? failure.code : failure !== undefined ? 'INTERNAL' : undefined;
    const indexRecord: SessionIndexRecord = {
      v: EVIDENCE_SCHEMA_VERSION,
      ts: finishedAt,
      traceId,
      messageId: `${sessionKey}#${firstSeq}`,
      sessionKey,
      agentId,
      channelType,
      ...(parseSessionKey(sessionKey) ? { chatId: parseSessionKey(sessionKey)?.channelId } : {}),
      origin,
      kind,
      provider: resolved.providerId,
      model: resolved.model,
      outcome: {
        endReason,
        degraded,
        severity: endReason === 'error' ? 'error' : degraded ? 'warning' : 'info',
      },
      finishReason,
      costUsd,
      tokens,
      durationMs,
      steps,
      toolCalls,
      synthetic: input.synthetic ?? false,
      trajectoryFile: `${TRAJECTORY_DIR}/${trajectoryFileName(sessionKey)}`,
      ...(errorCode ? { errorCode } : {}),
      ...(recallEvidence ? { recall: recallEvidence } : {}),
    };
    await Promise.all([evidence.trajectory(sessionKey, trajectory), evidence.sessionIndex(indexRecord)]);
    events.emit('agent:turn_completed', {
      agentId,
      sessionKey,
      traceId,
      endReason,
      finishReason,
      steps,
      durationMs,
      inputTokens: tokens.input,
      outputTokens: tokens.output,
      toolCallsOk: toolOk,
      toolCallsFailed: toolFailed,
      origin,
      // Where the turn came in: obs turns these into channel activity.
      channelType,
      ...(indexRecord.chatId ? { chatId: indexRecord.chatId } : {}),
    });

    if (failure !== undefined) {
      logger.warn(
        {
          agentId,
          traceId,
          provider: resolved.providerId,
          code: failure instanceof AgentRuntimeError ? failure.code : undefined,
          err:
            failure instanceof AgentRuntimeError ? { message: failure.message, code: failure.code } : failure,
          hint: 'check the provider entry (baseUrl, apiKey secret, model) and the provider status',
          errorKind: providerErrorKind(failure),
        },
        'agent turn failed',
      );
      throw failure;
    }
    if (degraded) {
      logger.warn(
        {
          agentId,
          traceId,
          endReason,
          durationMs,
          hint: degradedHint(endReason),
          errorKind:
            endReason === 'timeout'
              ? 'timeout'
              : endReason === 'context_exhausted' || endReason === 'output_starved'
                ? 'resource'
                : 'dependency',
        },
        'agent turn degraded',
      );
    } else {
      logger.debug(
        { agentId, traceId, endReason, durationMs, steps, messages: committed.messageCount },
        'agent turn',
      );
    }
    return {
      response,
      tokensUsed: { input: tokens.input, output: tokens.output, total: tokens.total },
      finishReason,
      sessionKey,
      endReason,
      steps,
      traceId,
    };
  }

  /**
   * Runs the agent's recall for the user message. A failure, a timeout or a cancelled turn
   * never fails the turn: it runs without memories and the evidence says why.
   */
  async function recallBeforeTurn(
    agent: AgentDefinition,
    agentId: string,
    sessionKey: string,
    traceId: string,
    message: string,
    turnSignal: AbortSignal,
  ): Promise<{ context: string | undefined; evidence: TurnRecallRecord }> {
    const started = performance.now();
    const limitMs = agent.memory.recallTimeoutMs;
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const failed = (errorKind: string): TurnRecallRecord => ({
      ok: false,
      lanes: [],
      finalCount: 0,
      ftsCandidates: 0,
      vectorCandidates: 0,
      reranked: false,
      rerankFellBack: false,
      degraded: false,
      injectedTokens: 0,
      durationMs: Math.round(performance.now() - started),
      errorKind,
    });
    try {
      const pending = (recall as TurnRecall).recall({
        agentId,
        sessionKey,
        message,
        signal: AbortSignal.any([turnSignal, controller.signal]),
      });
      // A recall abandoned at the time limit may still reject later; nobody waits for it then.
      pending.catch(() => undefined);
      const outcome = await Promise.race([
        pending,
        new Promise<'timeout'>((resolve) => {
          timer = setTimeout(() => resolve('timeout'), limitMs);
        }),
      ]);
      if (outcome === 'timeout') {
        controller.abort();
        logger.warn(
          {
            agentId,
            traceId,
            timeoutMs: limitMs,
            hint: `memory recall took longer than memory.recallTimeoutMs (${limitMs} ms) of the agent; the turn ran without memories (check the embedder or raise the limit)`,
            errorKind: 'timeout',
          },
          'auto recall timed out',
        );
        return { context: undefined, evidence: failed('timeout') };
      }
      const { record } = outcome;
      return {
        context: outcome.context,
        evidence: {
          ok: true,
          lanes: [...record.lanes],
          finalCount: outcome.entries.length,
          ftsCandidates: record.ftsCandidates,
          vectorCandidates: record.vectorCandidates,
          reranked: record.reranked,
          rerankFellBack: record.rerankFellBack,
          degraded: record.degraded,
          injectedTokens: 0,
          durationMs: Math.round(performance.now() - started),
        },
      };
    } catch (error) {
      const cancelled = turnSignal.aborted;
      if (!cancelled) {
        logger.warn(
          {
            agentId,
            traceId,
            err: error,
            hint: 'memory recall failed, so the turn ran without memories; check the memory store and its embedder',
            errorKind: 'dependency',
          },
          'auto recall failed',
        );
      }
      return { context: undefined, evidence: failed(cancelled ? 'cancelled' : 'dependency') };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Appends a committed turn to the cached tail, keeping at most one window of tokens. */
  function rememberTail(
    sessionKey: string,
    committed: SessionRecord,
    cached: CachedSession | undefined,
    added: NewMessage[],
    firstSeq: number,
    createdAt: number,
    traceId: string,
    windowTokens: number,
    agent: AgentDefinition,
  ): void {
    const entry = cached ?? { session: committed, messages: [], fromSeq: firstSeq };
    entry.session = committed;
    added.forEach((message, offset) => {
      entry.messages.push({ ...message, seq: firstSeq + offset, createdAt, traceId });
    });
    let tokens = 0;
    let keep = 0;
    for (let index = entry.messages.length - 1; index >= 0; index--) {
      const message = entry.messages[index] as SessionMessage;
      if (keep >= agent.contextBudget.maxHistoryMessages || tokens + message.tokens > windowTokens) break;
      tokens += message.tokens;
      keep++;
    }
    if (keep < entry.messages.length) {
      entry.messages.splice(0, entry.messages.length - keep);
      entry.fromSeq = entry.messages[0]?.seq ?? committed.nextSeq;
    }
    cache.set(sessionKey, entry);
  }

  /** Hands the prompt-cache figures of one model call to the cache trace; a failing sink never fails the turn. */
  function traceCache(
    base: { sessionKey: string; traceId: string; agentId: string },
    resolved: ResolvedModel,
    step: number,
    callUsage: ModelUsage,
  ): void {
    if (!cacheTrace) return;
    try {
      cacheTrace.append({
        ts: now(),
        traceId: base.traceId,
        sessionKey: base.sessionKey,
        agentId: base.agentId,
        provider: resolved.providerId,
        model: resolved.model,
        step,
        inputTokens: callUsage.inputTokens,
        cacheReadTokens: callUsage.cacheReadTokens,
        cacheWriteTokens: callUsage.cacheWriteTokens,
        hit: callUsage.cacheReadTokens > 0,
      });
      cacheTraceFailing = false;
    } catch (error) {
      if (cacheTraceFailing) return;
      cacheTraceFailing = true;
      logger.warn(
        {
          err: error,
          agentId: base.agentId,
          traceId: base.traceId,
          hint: 'the cache-trace record was dropped; check free space and permissions of the logs directory',
          errorKind: 'resource',
        },
        'cache trace append failed',
      );
    }
  }

  /** Emits a `tool:breaker` transition: ids, counts and the closed `event` enum only. */
  function emitBreaker(
    ids: { sessionKey: string; agentId: string; traceId: string; toolName: string; toolCallId: string },
    seq: number,
    event: ToolBreakerEvent,
    consecutiveFailures: number,
  ): void {
    events.emit('tool:breaker', { ...ids, seq, event, consecutiveFailures, ts: now() });
    const fields = {
      agentId: ids.agentId,
      traceId: ids.traceId,
      toolName: ids.toolName,
      consecutiveFailures,
    };
    if (event === 'opened') {
      logger.warn(
        {
          ...fields,
          hint: `the tool failed ${consecutiveFailures} times in a row in this session and is refused until its cooldown ends; fix the tool or raise toolBreaker.failureThreshold of the agent`,
          errorKind: 'dependency',
        },
        'tool breaker opened',
      );
    } else {
      logger.info(fields, `tool breaker ${event}`);
    }
  }

  async function runTool(
    agent: AgentDefinition,
    narrowed: readonly string[] | undefined,
    agentId: string,
    sessionKey: string,
    traceId: string,
    call: ModelToolCall,
    step: number,
    seq: number,
    turnSignal: AbortSignal,
  ): Promise<ToolOutcome> {
    const started = performance.now();
    const tool = tools.get(call.toolName);
    const ids = { sessionKey, agentId, traceId, toolName: call.toolName, toolCallId: call.toolCallId };
    let errorKind: string | undefined;
    let errorMessage: string | undefined;
    let resultText = 'null';
    if (!tool) {
      errorKind = 'unknown_tool';
      errorMessage = `Unknown tool: ${call.toolName}`;
    } else if (!toolAllowed(agent, call.toolName, narrowed)) {
      errorKind = 'denied';
      errorMessage = `Tool not allowed for this agent: ${call.toolName}`;
    }
    let value: unknown;
    // Whether the handler ran, so only its own outcomes move the breaker.
    let ran = false;
    if (tool && !errorKind) {
      const checked = tool.params.safeParse(call.input);
      const admission = checked.success
        ? breakers.admit(sessionKey, call.toolName, agent.toolBreaker, now())
        : undefined;
      if (!checked.success) {
        errorKind = 'invalid_input';
        errorMessage = `Invalid input for ${call.toolName}: ${checked.error.issues
          .map((issue) => `${issue.path.join('.') || '<root>'}: ${issue.message}`)
          .join('; ')}`;
      } else if (admission && !admission.allowed) {
        errorKind = 'breaker_open';
        errorMessage =
          `Tool ${call.toolName} is unavailable for now: it failed ${admission.consecutiveFailures} times in a row ` +
          `in this session, so it was not run. It may be tried again in about ${Math.ceil(admission.retryInMs / 1000)} s; ` +
          'until then continue without it or tell the user it is unavailable.';
      } else {
        if (admission?.transition) {
          emitBreaker(ids, seq, admission.transition.event, admission.transition.consecutiveFailures);
        }
        ran = true;
        const timeout = new AbortController();
        const signal = AbortSignal.any([turnSignal, timeout.signal]);
        let timer: NodeJS.Timeout | undefined;
        try {
          value = await Promise.race([
            tool.handler(checked.data, { agentId, sessionKey, signal, traceId }),
            new Promise((_, reject) => {
              timer = setTimeout(() => {
                timeout.abort();
                reject(
                  new AgentRuntimeError(
                    'PROVIDER_TIMEOUT',
                    `Tool ${call.toolName} exceeded ${agent.timeouts.toolMs} ms`,
                  ),
                );
              }, agent.timeouts.toolMs);
              turnSignal.addEventListener('abort', () => reject(turnSignal.reason), { once: true });
            }),
          ]);
        } catch (error) {
          if (turnSignal.aborted) {
            errorKind = 'cancelled';
            errorMessage = `Tool ${call.toolName} stopped: the turn ended`;
          } else if (timeout.signal.aborted) {
            errorKind = 'timeout';
            errorMessage = `Tool ${call.toolName} exceeded ${agent.timeouts.toolMs} ms`;
          } else {
            errorKind = 'tool_error';
            errorMessage = error instanceof Error ? error.message : String(error);
          }
        } finally {
          clearTimeout(timer);
        }
      }
    }
    if (!errorKind) {
      try {
        resultText = JSON.stringify(value ?? null) ?? 'null';
      } catch {
        errorKind = 'tool_error';
        errorMessage = `Tool ${call.toolName} returned a value that is not JSON-serialisable`;
      }
    }
    if (ran) {
      const transition = breakers.record(sessionKey, call.toolName, agent.toolBreaker, errorKind, now());
      if (transition) emitBreaker(ids, seq, transition.event, transition.consecutiveFailures);
    }
    const ok = errorKind === undefined;
    if (!ok) resultText = JSON.stringify({ error: errorMessage });
    const resultBytes = Buffer.byteLength(resultText);
    const resultDigest = digest(resultText);
    let content = resultText;
    if (resultText.length > MAX_TOOL_RESULT_CHARS) {
      // The model sees the head and a pointer; the whole result goes to disk for the post-mortem.
      const offload = await writeOffload({
        dataDir: parsed.dataDir,
        sessionKey,
        traceId,
        toolCallId: call.toolCallId,
        seq,
        ts: now(),
        text: resultText,
      });
      const cut = resultText.length - MAX_TOOL_RESULT_CHARS;
      const readable = offload.resolved && toolAllowed(agent, OFFLOAD_READ_TOOL, narrowed);
      const pointer = offload.resolved
        ? `the full result (${offload.bytes} bytes) is stored at ${offload.diskPathRel} in the data directory${
            readable
              ? `; read on with ${OFFLOAD_READ_TOOL} {"path":"${offload.diskPathRel}","offset":${MAX_TOOL_RESULT_CHARS}}`
              : ''
          }`
        : `the full result (${offload.bytes} bytes) was not stored`;
      content = `${resultText.slice(0, MAX_TOOL_RESULT_CHARS)}… [truncated ${cut} characters; ${pointer}]`;
      if (offload.reason === 'write_failed') {
        logger.warn(
          {
            err: offload.error,
            agentId,
            traceId,
            toolName: call.toolName,
            bytes: offload.bytes,
            hint: 'the large tool result was only kept truncated; check free space and permissions of the obs/offloads directory',
            errorKind: 'resource',
          },
          'tool result offload failed',
        );
      }
      events.emit('offload:written', {
        ...ids,
        seq,
        bytes: offload.bytes,
        diskPathRel: offload.diskPathRel,
        resultDigest,
        resolved: offload.resolved,
      });
    }
    const durationMs = Math.round((performance.now() - started) * 1000) / 1000;
    const message: NewMessage = {
      role: 'tool',
      content,
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      ...(ok ? {} : { isError: true }),
      tokens: 0,
    };
    message.tokens = estimateMessageTokens(toModelMessage(message));
    const record: TrajectoryRecord = {
      v: EVIDENCE_SCHEMA_VERSION,
      ts: now(),
      sessionKey,
      traceId,
      agentId,
      type: 'tool_call',
      seq,
      step,
      toolName: call.toolName,
      toolCallId: call.toolCallId,
      ok,
      durationMs,
      ...(errorKind ? { errorKind, errorPreview: (errorMessage ?? '').slice(0, 200) } : {}),
      resultBytes,
      resultDigest,
    };
    return { message, record, ok };
  }

  // ---------------------------------------------------------------- agents API

  const agents: AgentRuntime['agents'] = {
    list: () => [...agentEntries().keys()].sort(),
    get: (agentId) => view(agentId, requireAgent(agentId)),
    async create(raw) {
      const { agentId: requestedId, ...rest } = raw as { agentId?: unknown } & Record<string, unknown>;
      const candidate = typeof requestedId === 'string' ? requestedId : slugify(String(rest.name ?? ''));
      const idCheck = entityIdSchema.safeParse(candidate);
      if (!idCheck.success) {
        throw new AgentRuntimeError(
          'INVALID_OPTIONS',
          `agentId: ${idCheck.error.issues[0]?.message ?? 'invalid'}`,
          {
            data: { issues: [{ path: ['agentId'], code: 'custom', message: 'invalid agent id' }] },
          },
        );
      }
      const agentId = idCheck.data;
      if (findAgent(agentId)) {
        throw new AgentRuntimeError('AGENT_EXISTS', `Agent already exists: ${agentId}`, {
          data: { agentId },
        });
      }
      const definition = parseDefinition(rest);
      checkProvider(definition);
      await persist({ [agentId]: stripDefaults(rest) });
      agentsSection = { ...agentsSection, entries: { ...agentsSection.entries, [agentId]: definition } };
      return view(agentId, definition);
    },
    async update(agentId, patch, updateOptions = {}) {
      const current = requireAgent(agentId);
      const next = parseDefinition({ ...current, ...patch });
      checkProvider(next);
      const providerChanged =
        next.provider !== current.provider || (patch.model !== undefined && next.model !== current.model);
      let providerProbed = false;
      if (updateOptions.dryRun) {
        if (providerChanged) {
          const resolved = resolveModel(next, undefined);
          const provider = providerFactory(
            resolved.providerId,
            resolved.entry,
            await resolveApiKey(resolved.providerId, resolved.entry),
          );
          await provider.probe(AbortSignal.timeout(15_000));
          providerProbed = true;
        }
        return { agentId, updated: false, dryRun: true, agent: view(agentId, next), providerProbed };
      }
      const persisted = agentsSection.entries[agentId] === undefined ? { name: next.name, ...patch } : patch;
      await persist({ [agentId]: persisted });
      agentsSection = { ...agentsSection, entries: { ...agentsSection.entries, [agentId]: next } };
      return { agentId, updated: true, dryRun: false, agent: view(agentId, next), providerProbed };
    },
    async delete(agentId) {
      requireAgent(agentId);
      if (agentId === DEFAULT_AGENT_ID && agentsSection.entries[agentId] === undefined) {
        throw new AgentRuntimeError(
          'INVALID_OPTIONS',
          'agentId: the built-in default agent cannot be deleted; suspend it instead',
          {
            data: { issues: [{ path: ['agentId'], code: 'custom', message: 'built-in agent' }] },
          },
        );
      }
      await persist({ [agentId]: null });
      const { [agentId]: _removed, ...entries } = agentsSection.entries;
      agentsSection = { ...agentsSection, entries };
      return { agentId, deleted: true };
    },
    async suspend(agentId) {
      const current = requireAgent(agentId);
      await setSuspended(agentId, current, true);
      return { agentId, suspended: true, inFlight: running.get(agentId) ?? 0 };
    },
    async resume(agentId) {
      const current = requireAgent(agentId);
      await setSuspended(agentId, current, false);
      return { agentId, resumed: true };
    },
    operationModels(agentId) {
      const agent = requireAgent(agentId);
      const primary = resolveModel(agent, undefined);
      const operation = (
        operationType: string,
        configured:
          | { provider?: string | undefined; model?: string | undefined; timeoutMs?: number | undefined }
          | undefined,
      ) => {
        const resolved = configured ? resolveModel(agent, undefined, configured) : primary;
        return {
          operationType,
          model: resolved.model,
          provider: resolved.providerId,
          source: configured ? ('config' as const) : ('default' as const),
          tieringActive: false,
          timeoutMs:
            configured?.timeoutMs ??
            (operationType === 'chat' ? agent.timeouts.turnMs : resolved.entry.timeoutMs),
          crossProvider: resolved.providerId !== primary.providerId,
          apiKeyConfigured: resolved.entry.type === 'offline' || resolved.entry.apiKey !== undefined,
        };
      };
      return {
        agentId,
        primaryModel: primary.model,
        providerFamily: primary.entry.type,
        tieringActive: false,
        operations: [operation('chat', undefined), operation('compaction', agent.operations.compaction)],
      };
    },
  };

  function parseDefinition(input: Record<string, unknown>): AgentDefinition {
    const result = agentDefinitionSchema.safeParse(input);
    if (!result.success) {
      const issues = result.error.issues.map((issue) => ({
        path: issue.path.map((part) => (typeof part === 'symbol' ? String(part) : part)),
        code: issue.code,
        message: issue.message,
      }));
      const first = issues[0];
      throw new AgentRuntimeError(
        'INVALID_OPTIONS',
        `${first?.path.join('.') || '<root>'}: ${first?.message ?? 'invalid'}`,
        {
          data: { issues },
        },
      );
    }
    return result.data;
  }

  function checkProvider(definition: AgentDefinition): void {
    if (!providerEntry(definition.provider)) {
      throw new AgentRuntimeError(
        'PROVIDER_NOT_FOUND',
        `provider: Provider not found: ${definition.provider}`,
        {
          data: {
            provider: definition.provider,
            issues: [{ path: ['provider'], code: 'custom', message: 'unknown provider' }],
          },
        },
      );
    }
  }

  async function persist(entries: Record<string, Partial<AgentDefinitionInput> | null>): Promise<void> {
    if (persistAgents) await persistAgents(entries);
  }

  async function setSuspended(agentId: string, current: AgentDefinition, suspended: boolean): Promise<void> {
    const next = { ...current, suspended };
    const persisted =
      agentsSection.entries[agentId] === undefined ? { name: current.name, suspended } : { suspended };
    await persist({ [agentId]: persisted });
    agentsSection = { ...agentsSection, entries: { ...agentsSection.entries, [agentId]: next } };
    events.emit(suspended ? 'agent:suspended' : 'agent:resumed', {
      agentId,
      inFlight: running.get(agentId) ?? 0,
    });
  }

  // ---------------------------------------------------------------- sessions API

  async function requireSession(sessionKey: string): Promise<SessionRecord> {
    const session = await store.get(sessionKey);
    if (!session) {
      throw new AgentRuntimeError('SESSION_NOT_FOUND', `Session not found: ${sessionKey}`, {
        data: { sessionKey },
      });
    }
    return session;
  }

  function exportOf(session: SessionRecord, messages: SessionMessage[]): SessionExport {
    return {
      sessionKey: session.sessionKey,
      messages,
      metadata: {
        ...session.metadata,
        agentId: session.agentId,
        channelType: session.channelType,
        kind: session.kind,
        turns: session.turns,
        tokens: {
          input: session.inputTokens,
          output: session.outputTokens,
          cacheRead: session.cacheReadTokens,
          cacheWrite: session.cacheWriteTokens,
        },
        costUsd: session.costUsd,
        ...(session.summary
          ? { summary: session.summary, compactedBeforeSeq: session.compactedBeforeSeq }
          : {}),
      },
      messageCount: session.messageCount,
      createdAt: session.createdAt,
      updatedAt: session.updatedAt,
    };
  }

  const sessions: AgentRuntime['sessions'] = {
    async status(sessionKey) {
      const session = await requireSession(sessionKey);
      const agent = findAgent(session.agentId);
      let model: ResolvedModel | undefined;
      try {
        model = agent ? resolveModel(agent, undefined) : undefined;
      } catch {
        model = undefined;
      }
      return {
        sessionKey,
        agentId: session.agentId,
        agentStatus: agent ? (agent.suspended ? 'suspended' : 'active') : 'deleted',
        provider: session.lastProvider ?? model?.providerId,
        model: session.lastModel ?? model?.model,
        contextWindow: model?.contextWindow,
        tokens: {
          input: session.inputTokens,
          output: session.outputTokens,
          total: session.inputTokens + session.outputTokens,
          cacheRead: session.cacheReadTokens,
          cacheWrite: session.cacheWriteTokens,
        },
        costUsd: session.costUsd,
        turns: session.turns,
        stepsExecuted: session.steps,
        lastTurnSteps: session.lastSteps,
        stepLimit: agent?.maxSteps,
        messageCount: session.messageCount,
        compacted: session.summary !== undefined,
        kind: session.kind,
        channelType: session.channelType,
        createdAt: session.createdAt,
        updatedAt: session.updatedAt,
      };
    },
    async history(sessionKey, historyOptions = {}) {
      const session = await requireSession(sessionKey);
      const messages = await store.history(session, historyOptions);
      return { sessionKey, messages, ...(session.summary ? { summary: session.summary } : {}) };
    },
    async list(listOptions = {}) {
      const rows = await store.list({
        sinceMs: listOptions.sinceMs,
        kind: listOptions.kind,
        limit: listOptions.limit ?? 100,
      });
      return rows.map((session) => ({
        sessionKey: session.sessionKey,
        agentId: session.agentId,
        channelType: session.channelType,
        kind: session.kind,
        messageCount: session.messageCount,
        turns: session.turns,
        createdAt: session.createdAt,
        updatedAt: session.updatedAt,
      }));
    },
    async export(sessionKey) {
      const session = await requireSession(sessionKey);
      return exportOf(session, await store.history(session));
    },
    delete: (sessionKey) =>
      locks.run(sessionKey, async () => {
        cache.delete(sessionKey);
        recall?.forget?.(sessionKey);
        breakers.forget(sessionKey);
        const removed = await store.delete(sessionKey);
        if (!removed) {
          throw new AgentRuntimeError('SESSION_NOT_FOUND', `Session not found: ${sessionKey}`, {
            data: { sessionKey },
          });
        }
        let memoriesDeleted: number | undefined;
        if (memory) memoriesDeleted = await deleteMemories(removed.session.agentId, sessionKey, false);
        events.emit('session:deleted', {
          sessionKey,
          agentId: removed.session.agentId,
          messages: removed.messages.length,
        });
        return {
          sessionKey,
          deleted: true as const,
          transcript: exportOf(removed.session, removed.messages),
          ...(memoriesDeleted !== undefined ? { memoriesDeleted } : {}),
        };
      }),
    reset: (sessionKey) =>
      locks.run(sessionKey, async () => {
        cache.delete(sessionKey);
        recall?.forget?.(sessionKey);
        breakers.forget(sessionKey);
        const cleared = await store.clearMessages(sessionKey, now());
        if (!cleared) {
          throw new AgentRuntimeError('SESSION_NOT_FOUND', `Session not found: ${sessionKey}`, {
            data: { sessionKey },
          });
        }
        const approvalsCleared = approvals ? await approvals.clearSession(sessionKey) : 0;
        events.emit('session:reset', {
          sessionKey,
          messages: cleared.previousMessageCount,
          approvalsCleared,
        });
        return { sessionKey, reset: true as const, previousMessageCount: cleared.previousMessageCount };
      }),
    resetConversation: (sessionKey, resetOptions = {}) =>
      locks.run(sessionKey, async () => {
        cache.delete(sessionKey);
        recall?.forget?.(sessionKey);
        breakers.forget(sessionKey);
        const session = await store.get(sessionKey);
        const cleared = session ? await store.clearMessages(sessionKey, now()) : undefined;
        if (approvals && session) await approvals.clearSession(sessionKey);
        const result: ResetConversationResult = {
          sessionKey,
          lcdRowsDeleted: cleared ? cleared.rowsDeleted + (cleared.hadSummary ? 1 : 0) : 0,
          sessionMessagesCleared: cleared?.previousMessageCount ?? 0,
          runtimeSessionDestroyed: true,
        };
        if (resetOptions.memory && memory) {
          result.memoriesDeleted = await deleteMemories(
            session?.agentId ?? DEFAULT_AGENT_ID,
            sessionKey,
            resetOptions.purgeDerived ?? false,
          );
        }
        events.emit('session:conversation_reset', {
          sessionKey,
          lcdRowsDeleted: result.lcdRowsDeleted,
          sessionMessagesCleared: result.sessionMessagesCleared,
          memoriesDeleted: result.memoriesDeleted ?? 0,
        });
        return result;
      }),
    search: (query, limit = 20) => store.search(query, limit),
    compact: (sessionKey) => locks.run(sessionKey, () => compactLocked(sessionKey)),
  };

  async function deleteMemories(agentId: string, sessionKey: string, purgeDerived: boolean): Promise<number> {
    try {
      return (await memory?.deleteBySession({ agentId, sessionKey, purgeDerived })) ?? 0;
    } catch (error) {
      logger.warn(
        {
          err: error,
          agentId,
          hint: 'memory entries of the session were kept; delete them with memory.delete',
          errorKind: 'dependency',
        },
        'session memory delete failed',
      );
      return 0;
    }
  }

  async function compactLocked(sessionKey: string): Promise<CompactResult> {
    cache.delete(sessionKey);
    const session = await requireSession(sessionKey);
    const agent = findAgent(session.agentId);
    if (!agent) {
      throw new AgentRuntimeError(
        'AGENT_DELETED',
        `Agent deleted: ${session.agentId}; session ${sessionKey} cannot be compacted`,
        {
          data: { agentId: session.agentId, sessionKey },
        },
      );
    }
    const live = (await store.loadTail(session, session.nextSeq, 1_000_000)).reverse();
    // Keep the last two user exchanges verbatim; everything before them goes into the summary.
    const userIndexes = live.flatMap((message, index) => (message.role === 'user' ? [index] : []));
    const boundaryIndex = userIndexes.length >= 2 ? (userIndexes.at(-2) ?? 0) : 0;
    const nothing = {
      sessionKey,
      compacted: false,
      messagesSummarized: 0,
      keptMessages: live.length,
      summaryTokens: session.summaryTokens,
      tokensUsed: { input: 0, output: 0, total: 0 },
    };
    if (boundaryIndex === 0) return { ...nothing, reason: 'too little history to compact' };
    const older = live.slice(0, boundaryIndex);
    const boundarySeq = live[boundaryIndex]?.seq ?? session.nextSeq;
    const resolved = resolveModel(agent, undefined, agent.operations.compaction);
    const provider = await getProvider(resolved.providerId, resolved.entry);
    const lines = older.map((message) => {
      const text = message.role === 'tool' ? message.content.slice(0, 500) : message.content;
      const calls = message.toolCalls?.map((call) => ` [called ${call.toolName}]`).join('') ?? '';
      return `${message.role}${message.toolName ? ` (${message.toolName})` : ''}: ${text}${calls}`;
    });
    if (session.summary) lines.unshift(`earlier summary: ${session.summary}`);
    // Fit the transcript into the compaction model's window, keeping its newest part.
    const outputHeadroom = Math.min(resolved.maxOutputTokens, 2048);
    const budget = resolved.contextWindow - outputHeadroom - 200;
    let transcript = lines.join('\n');
    if (estimateTokens(transcript) > budget) transcript = transcript.slice(-Math.max(0, budget * 4));
    const usage = emptyUsage();
    // The compaction call is billed and cache-traced under a trace id of its own.
    const compactionTraceId = randomId();
    let summary = '';
    const timeoutMs = agent.operations.compaction?.timeoutMs ?? resolved.entry.timeoutMs;
    for await (const event of provider.stream({
      model: resolved.model,
      system:
        'Summarise the conversation below so it can replace the original messages in future context. ' +
        'Keep facts, decisions, open questions and user preferences; be concise.',
      messages: [{ role: 'user', content: transcript }],
      tools: [],
      maxOutputTokens: outputHeadroom,
      signal: AbortSignal.timeout(timeoutMs),
      purpose: 'compaction',
    })) {
      if (event.type === 'text-delta') summary += event.text;
      else if (event.type === 'finish') {
        addUsage(usage, event.usage);
        traceCache(
          { sessionKey, traceId: compactionTraceId, agentId: session.agentId },
          resolved,
          1,
          event.usage,
        );
      }
    }
    summary = summary.trim();
    if (!summary) return { ...nothing, reason: 'the model returned an empty summary' };
    const summaryTokens = estimateTokens(summary);
    const at = now();
    await store.compact(session.id, boundarySeq, summary, summaryTokens, at);
    const { costUsd, cacheSavedUsd } = costOf(usage, resolved.prices);
    await store.recordBilling({
      sessionKey,
      agentId: session.agentId,
      now: at,
      traceId: compactionTraceId,
      steps: 1,
      provider: resolved.providerId,
      model: resolved.model,
      usage,
      costUsd,
      cacheSavedUsd,
    });
    events.emit('session:compacted', {
      sessionKey,
      agentId: session.agentId,
      messagesSummarized: older.length,
    });
    return {
      sessionKey,
      compacted: true,
      messagesSummarized: older.length,
      keptMessages: live.length - older.length,
      summaryTokens,
      tokensUsed: {
        input: usage.inputTokens,
        output: usage.outputTokens,
        total: usage.inputTokens + usage.outputTokens,
      },
    };
  }

  // ---------------------------------------------------------------- models, billing

  function models(): { providers: ProviderView[]; models: ModelView[] } {
    const providers: ProviderView[] = [];
    const all: ModelView[] = [];
    for (const [id, entry] of [...providerEntries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const capabilityClass = entry.capabilities.capabilityClass;
      const list = entry.models.map((model) => {
        const detail = typeof model === 'string' ? { id: model } : model;
        return {
          id: `${id}/${detail.id}`,
          provider: id,
          model: detail.id,
          ...(capabilityClass ? { capabilityClass } : {}),
          contextWindow: detail.contextWindow ?? entry.contextWindow,
          maxOutputTokens: detail.maxOutputTokens ?? entry.maxOutputTokens,
          prices: detail.prices ?? entry.prices,
        };
      });
      all.push(...list);
      providers.push({
        id,
        type: entry.type,
        offline: entry.type === 'offline',
        ...(entry.baseUrl ? { baseUrl: safeUrl(entry.baseUrl) } : {}),
        apiKeyConfigured: entry.apiKey !== undefined,
        ...(capabilityClass ? { capabilityClass } : {}),
        contextWindow: entry.contextWindow,
        maxOutputTokens: entry.maxOutputTokens,
        models: list,
      });
    }
    return { providers, models: all };
  }

  const billing: AgentRuntime['billing'] = {
    total: (sinceMs) => store.billingAggregate({ sinceMs }),
    byAgent: (agentId, sinceMs) => store.billingAggregate({ agentId, sinceMs }),
    bySession: (sessionKey, sinceMs) => store.billingAggregate({ sessionKey, sinceMs }),
    byProvider: async (sinceMs) => ({ providers: await store.billingByProvider(sinceMs) }),
    async usage24h() {
      const hourMs = 3_600_000;
      const currentBucket = Math.floor(now() / hourMs);
      const buckets = await store.billingHourly((currentBucket - 23) * hourMs);
      const out: Array<{ hour: number; tokens: number }> = [];
      for (let bucket = currentBucket - 23; bucket <= currentBucket; bucket++) {
        out.push({ hour: new Date(bucket * hourMs).getUTCHours(), tokens: buckets.get(bucket) ?? 0 });
      }
      return out;
    },
  };

  return {
    async start() {
      await db.migrate(MIGRATION_PACKAGE, agentRuntimeMigrations);
    },
    runTurn,
    registerTools(list) {
      for (const tool of list) addTool(tool);
    },
    toolNames: () => [...tools.keys()].sort(),
    applyConfig(config) {
      if (config.agents !== undefined)
        agentsSection = parseOptions(agentsSectionSchema, config.agents, 'applyConfig.agents');
      if (config.providers !== undefined) {
        providersSection = parseOptions(providersSectionSchema, config.providers, 'applyConfig.providers');
      }
      if (config.contextEngine !== undefined) {
        contextEngine = parseOptions(
          contextEngineSectionSchema,
          config.contextEngine,
          'applyConfig.contextEngine',
        );
      }
    },
    agents,
    models,
    async cacheStats(agentId) {
      if (agentId !== undefined) requireAgent(agentId);
      return { ...(agentId ? { agentId } : {}), ...(await store.cacheStats(agentId)) };
    },
    sessions,
    billing,
    evidenceRolls: evidence.rolls,
    get inFlight() {
      let total = 0;
      for (const count of running.values()) total += count;
      return total;
    },
    async close() {
      closed = true;
      await Promise.allSettled([...turnsInFlight]);
      await evidence.flush();
    },
  };
}

function toModelMessage(message: NewMessage | SessionMessage): ModelMessage {
  if (message.role === 'user') return { role: 'user', content: message.content };
  if (message.role === 'assistant') {
    return message.toolCalls && message.toolCalls.length > 0
      ? { role: 'assistant', content: message.content, toolCalls: message.toolCalls }
      : { role: 'assistant', content: message.content };
  }
  return {
    role: 'tool',
    toolCallId: message.toolCallId ?? '',
    toolName: message.toolName ?? '',
    content: message.content,
    ...(message.isError ? { isError: true } : {}),
  };
}

/**
 * A cancelled turn can stop between a tool call and its result; a stored call without a
 * result would make every later request invalid, so such calls are dropped from the message.
 */
function dropDanglingToolCalls(messages: NewMessage[]): void {
  const answered = new Set(
    messages.filter((message) => message.role === 'tool').map((message) => message.toolCallId),
  );
  for (const message of messages) {
    if (message.role !== 'assistant' || !message.toolCalls) continue;
    const kept = message.toolCalls.filter((call) => answered.has(call.toolCallId));
    if (kept.length === message.toolCalls.length) continue;
    if (kept.length > 0) message.toolCalls = kept;
    else delete message.toolCalls;
    message.tokens = estimateMessageTokens(toModelMessage(message));
  }
  // An assistant message left with neither text nor calls carries nothing.
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index];
    if (message?.role === 'assistant' && !message.content && !message.toolCalls) messages.splice(index, 1);
  }
}

/**
 * The recall block cut to `maxTokens`: whole memory lines from the most relevant down, under
 * the block's heading line; `undefined` when not even one memory fits.
 */
function fitRecallBlock(block: string, maxTokens: number): string | undefined {
  // Two characters for the blank line that separates the block from the rest of the system prompt.
  if (estimateTokens(`\n\n${block}`) <= maxTokens) return block;
  const [heading = '', ...lines] = block.split('\n');
  const kept: string[] = [];
  for (const line of lines) {
    if (estimateTokens(`\n\n${[heading, ...kept, line].join('\n')}`) > maxTokens) break;
    kept.push(line);
  }
  return kept.length > 0 ? [heading, ...kept].join('\n') : undefined;
}

function addUsage(total: ModelUsage, add: ModelUsage): void {
  total.inputTokens += add.inputTokens;
  total.outputTokens += add.outputTokens;
  total.cacheReadTokens += add.cacheReadTokens;
  total.cacheWriteTokens += add.cacheWriteTokens;
}

function slugify(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '')
    .replace(/-+$/, '')
    .slice(0, 64);
}

/** Keeps only the keys the caller wrote, so config.yaml stays minimal (defaults stay implicit). */
function stripDefaults(input: Record<string, unknown>): Partial<AgentDefinitionInput> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) if (value !== undefined) out[key] = value;
  return out as Partial<AgentDefinitionInput>;
}

function safeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return '';
  }
}

function providerErrorKind(error: unknown): ErrorKind {
  if (error instanceof AgentRuntimeError) {
    if (error.code === 'PROVIDER_AUTH') return 'auth';
    if (error.code === 'PROVIDER_TIMEOUT') return 'timeout';
    if (error.code === 'SECRET_MISSING' || error.code === 'PROVIDER_NOT_FOUND') return 'config';
    if (error.code === 'PROVIDER_RATE_LIMITED' || error.code === 'PROVIDER_ERROR') return 'dependency';
  }
  return 'internal';
}

function degradedHint(endReason: EndReason): string {
  switch (endReason) {
    case 'context_exhausted':
      return 'the system prompt, tools and message do not fit the context window; shorten them or use a larger model';
    case 'output_starved':
      return 'the reply was cut at the output limit; raise maxOutputTokens of the agent or provider';
    case 'timeout':
      return 'the model stalled or the turn hit its makespan; check the provider or raise timeouts';
    case 'max_steps':
      return 'the agent was still calling tools at its step limit; raise maxSteps or check the tools';
    case 'completed_with_tool_errors':
      return 'some tool calls failed; see the trajectory records of the session';
    default:
      return 'see the session-index record of the turn';
  }
}
