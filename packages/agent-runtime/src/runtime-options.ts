import { randomUUID } from 'node:crypto';
import type { ObservedTurn, SpanSink } from '@agentd/contracts';
import { type Database, type KeyedLock, localKeyedLock } from '@agentd/storage';
import { z } from 'zod';
import type { CacheTraceSink } from '@agentd/evidence';
import {
  type AgentDefinitionInput,
  type AgentsSection,
  agentsSectionSchema,
  type ContextEngineSection,
  contextEngineSectionSchema,
  type ProviderEntry,
  type ProvidersSection,
  providersSectionSchema,
} from './config.js';
import { invalidOptions, type OptionIssue, parseOptions } from './internal/options.js';
import { type AgentRuntimeLogger, noopLogger } from './logger.js';
import type { OfflineProviderOptions } from './offline-provider.js';
import type { ModelProvider } from './provider.js';
import type { ToolGate } from './tool-gates.js';
import { type AgentTool, type EventSink, noopEventSink, type TurnOrigin } from './types.js';

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

/**
 * Skills in the prompt: the name and description of each skill an agent may load, added to
 * the system prompt of agents offered the `readTool` (the body is loaded by that tool).
 */
export interface TurnSkills {
  /** The agent tool that loads a skill's body (`skill_read`). */
  readTool: string;
  /** The prompt block listing the agent's usable skills, or undefined when it has none. */
  promptBlock(agentId: string): Promise<string | undefined>;
}

export type { ObservedTurn };

/** Sees every finished turn (the learning layer resolves outcomes from them). */
export type TurnObserver = (turn: ObservedTurn) => void;

/**
 * Decides where a turn may run (a cluster's home instance): called before every turn with the
 * agent that runs it (an existing session's own agent, whatever the request names) and the
 * turn's origin, before the turn queues for its session. A throw refuses the turn with that
 * error; nothing is recorded.
 */
export type TurnPlacement = (agentId: string, origin: TurnOrigin) => Promise<void> | void;

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
   * Gates every tool call passes after the built-in allow-list, input and breaker gates and
   * before the offload of large results (see {@link ToolGate}). @default []
   */
  toolGates?: ToolGate[];
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
  /**
   * Who may run a session's turn now: one holder per session key. In cluster mode the daemon
   * passes storage's `keyedLock(coordinator, 'session')`, so a session's turns are serialised
   * across instances and its writes are fenced. @default an in-process mutex per session
   */
  sessionLocks?: KeyedLock | undefined;
  /** Event bus. @default no-op */
  events?: EventSink;
  /**
   * Receives one prompt-cache record per model call (the daemon writes them to
   * `logs/cache-trace.jsonl`). @default none (no cache trace)
   */
  cacheTrace?: CacheTraceSink | undefined;
  /**
   * Receives each finished turn, model call and tool call as a span (the daemon exports them over
   * OTLP when `telemetry.otlp.endpoint` is set). @default none
   */
  spans?: SpanSink | undefined;
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

/** {@link AgentRuntimeOptions} after validation, with every default applied. */
export interface RuntimeSettings {
  db: Database;
  dataDir: string;
  agents: AgentsSection;
  providers: ProvidersSection;
  contextEngine: ContextEngineSection;
  tools: AgentTool[];
  toolGates: ToolGate[];
  resolveSecret: (name: string) => string | undefined | Promise<string | undefined>;
  persistAgents: AgentRuntimeOptions['persistAgents'];
  offline: OfflineProviderOptions;
  providerFactory: ProviderFactory | undefined;
  memory: SessionMemory | undefined;
  approvals: ApprovalCache | undefined;
  recall: TurnRecall | undefined;
  /** Set by `useSkills`: the skill lines of an agent's prompt. */
  skills: TurnSkills | undefined;
  /** Set by `useTurnObserver`. */
  observer: TurnObserver | undefined;
  /** Set by `useTurnPlacement`. */
  placement: TurnPlacement | undefined;
  sessionCacheSize: number;
  sessionLocks: KeyedLock;
  events: EventSink;
  cacheTrace: CacheTraceSink | undefined;
  spans: SpanSink | undefined;
  evidenceRotation: { maxSizeBytes?: number; maxFiles?: number } | undefined;
  logger: AgentRuntimeLogger;
  now: () => number;
  randomId: () => string;
}

/** The roll size and part count of evidence files (`observability.logRotation`; other keys ignored). */
export const evidenceRotationSchema = z
  .object({
    maxSizeBytes: z.number().int().positive().optional(),
    maxFiles: z.number().int().min(0).optional(),
  })
  .loose();

/** The data fields of the options; the functions and services are checked by shape below. */
const dataSchema = z.object({
  dataDir: z.string().min(1),
  agents: agentsSectionSchema.default({ entries: {}, toolDenylist: [] }),
  providers: providersSectionSchema.default({ entries: {} }),
  contextEngine: contextEngineSectionSchema.default(contextEngineSectionSchema.parse({})),
  sessionCacheSize: z.number().int().min(0).default(64),
  evidenceRotation: evidenceRotationSchema.optional(),
});

const WHERE = 'createAgentRuntime';

/** Validates {@link AgentRuntimeOptions} and applies the defaults; throws `INVALID_OPTIONS`. */
export function resolveRuntimeOptions(options: AgentRuntimeOptions): RuntimeSettings {
  if (!isObject(options)) {
    throw invalidOptions(WHERE, [{ path: [], code: 'invalid_type', message: 'expected an object' }]);
  }
  const issues: OptionIssue[] = [];
  const expect = (key: keyof AgentRuntimeOptions, ok: boolean, message: string): void => {
    if (!ok) issues.push({ path: [key], code: 'custom', message });
  };
  const optional = (key: keyof AgentRuntimeOptions, check: (value: unknown) => boolean, message: string) =>
    expect(key, options[key] === undefined || check(options[key]), message);
  const isFunction = (value: unknown) => typeof value === 'function';
  const hasMethod = (method: string) => (value: unknown) =>
    isObject(value) && typeof (value as Record<string, unknown>)[method] === 'function';

  expect('db', isObject(options.db), 'a Database');
  optional('tools', Array.isArray, 'expected an array of tools');
  optional('toolGates', Array.isArray, 'expected an array of tool gates');
  optional('resolveSecret', isFunction, 'expected a function');
  optional('persistAgents', isFunction, 'expected a function');
  optional('providerFactory', isFunction, 'expected a function');
  optional('now', isFunction, 'expected a function');
  optional('randomId', isFunction, 'expected a function');
  optional('offline', isObject, 'expected an object');
  optional('memory', hasMethod('deleteBySession'), 'an object with a deleteBySession(input) function');
  optional('approvals', hasMethod('clearSession'), 'an object with a clearSession(sessionKey) function');
  optional('recall', hasMethod('recall'), 'an object with a recall(request) function');
  optional('sessionLocks', hasMethod('run'), 'an object with run(key, task) and guard(tx, key) functions');
  optional('events', hasMethod('emit'), 'an object with an emit(event, payload) function');
  optional('cacheTrace', hasMethod('append'), 'an object with an append(record) function');
  optional('logger', isObject, 'a pino-compatible logger');
  if (issues.length > 0) throw invalidOptions(WHERE, issues);

  const data = parseOptions(dataSchema, options, WHERE);
  return {
    db: options.db,
    dataDir: data.dataDir,
    agents: data.agents,
    providers: data.providers,
    contextEngine: data.contextEngine,
    tools: options.tools ?? [],
    toolGates: options.toolGates ?? [],
    resolveSecret: options.resolveSecret ?? ((name: string) => process.env[name]),
    persistAgents: options.persistAgents,
    offline: options.offline ?? {},
    providerFactory: options.providerFactory,
    memory: options.memory,
    approvals: options.approvals,
    recall: options.recall,
    skills: undefined,
    observer: undefined,
    placement: undefined,
    sessionCacheSize: data.sessionCacheSize,
    sessionLocks: options.sessionLocks ?? localKeyedLock(),
    events: options.events ?? noopEventSink,
    cacheTrace: options.cacheTrace,
    spans: options.spans,
    evidenceRotation: data.evidenceRotation,
    logger: options.logger ?? noopLogger,
    now: options.now ?? Date.now,
    randomId: options.randomId ?? randomUUID,
  };
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}
