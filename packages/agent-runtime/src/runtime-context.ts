import type { Database } from '@agentd/storage';
import type { CacheTraceSink } from '@agentd/evidence';
import type { AgentsSection, ContextEngineSection, ProvidersSection } from './config.js';
import { EvidenceWriter } from '@agentd/evidence';
import { SessionCache } from './internal/session-cache.js';
import type { AgentRuntimeLogger } from './logger.js';
import type { ModelUsage } from './provider.js';
import type { RuntimeSettings } from './runtime-options.js';
import { ContextDagStore } from './context-dag-store.js';
import { SessionStore } from './session-store.js';
import { ToolBreakers } from './tool-breaker.js';
import type { EventSink } from './types.js';

/** The config sections the runtime applies; replaced as a whole on `applyConfig` and agent changes. */
export interface RuntimeConfig {
  agents: AgentsSection;
  providers: ProvidersSection;
  contextEngine: ContextEngineSection;
}

/** Ids of one model call, for its cache-trace record. */
export interface CallIds {
  sessionKey: string;
  traceId: string;
  agentId: string;
}

/**
 * What every module of the runtime shares: storage, evidence, clock, ids, logger, events,
 * the live config and the per-session state (locks, context cache, tool breakers). One
 * object, built once by {@link createRuntimeContext}; the modules read it and never copy
 * its mutable parts.
 */
export interface RuntimeContext {
  readonly settings: RuntimeSettings;
  readonly db: Database;
  readonly dataDir: string;
  readonly store: SessionStore;
  /** The context DAG's summary nodes. */
  readonly dag: ContextDagStore;
  readonly evidence: EvidenceWriter;
  readonly logger: AgentRuntimeLogger;
  readonly events: EventSink;
  readonly now: () => number;
  readonly randomId: () => string;
  /**
   * Serialises the turns and session operations of one session key (across instances in
   * cluster mode: `sessionLocks`); a task that follows another instance's drops the session's
   * cached state first.
   */
  readonly locks: { run<T>(sessionKey: string, task: () => Promise<T> | T): Promise<T> };
  /** Context tails of recent sessions. */
  readonly cache: SessionCache;
  /** Per-session tool circuit breakers. */
  readonly breakers: ToolBreakers;
  /** The live config; modules read `config.agents` etc. at use, so a change applies to the next use. */
  readonly config: RuntimeConfig;
  /** Turns running now, per agent id. */
  readonly running: Map<string, number>;
  /** Hands the prompt-cache figures of one model call to the cache trace; a failing sink never fails the call. */
  traceCache(
    ids: CallIds,
    model: { providerId: string; model: string },
    step: number,
    usage: ModelUsage,
  ): void;
  /** Drops every per-session state (context cache, recall state, breakers) of a session. */
  forgetSession(sessionKey: string): void;
}

/** Builds the shared context from validated options. */
export function createRuntimeContext(settings: RuntimeSettings): RuntimeContext {
  const { logger, now } = settings;
  const rotation = settings.evidenceRotation;
  const evidence = new EvidenceWriter({
    dataDir: settings.dataDir,
    logger: logger,
    ...(rotation
      ? {
          rotation: {
            ...(rotation.maxSizeBytes === undefined ? {} : { maxSizeBytes: rotation.maxSizeBytes }),
            ...(rotation.maxFiles === undefined ? {} : { maxFiles: rotation.maxFiles }),
          },
        }
      : {}),
  });
  const cache = new SessionCache(settings.sessionCacheSize);
  const breakers = new ToolBreakers();
  const forget = (sessionKey: string) => {
    cache.delete(sessionKey);
    settings.recall?.forget?.(sessionKey);
    breakers.forget(sessionKey);
  };
  const traceCache = cacheTracer(settings.cacheTrace, logger, now);
  return {
    settings,
    db: settings.db,
    dataDir: settings.dataDir,
    store: new SessionStore(settings.db, settings.sessionLocks),
    dag: new ContextDagStore(settings.db),
    evidence,
    logger,
    events: settings.events,
    now,
    randomId: settings.randomId,
    locks: {
      run: (sessionKey, task) =>
        settings.sessionLocks.run(sessionKey, (lease) => {
          // Another instance held the session since this one did: what is cached here is stale.
          if (!lease.continuous) forget(sessionKey);
          return task();
        }),
    },
    cache,
    breakers,
    config: {
      agents: settings.agents,
      providers: settings.providers,
      contextEngine: settings.contextEngine,
    },
    running: new Map(),
    traceCache,
    forgetSession: forget,
  };
}

function cacheTracer(
  sink: CacheTraceSink | undefined,
  logger: AgentRuntimeLogger,
  now: () => number,
): RuntimeContext['traceCache'] {
  // Set after an append failed, so a broken sink warns once rather than per model call.
  let failing = false;
  return (ids, model, step, usage) => {
    if (!sink) return;
    try {
      sink.append({
        ts: now(),
        traceId: ids.traceId,
        sessionKey: ids.sessionKey,
        agentId: ids.agentId,
        provider: model.providerId,
        model: model.model,
        step,
        inputTokens: usage.inputTokens,
        cacheReadTokens: usage.cacheReadTokens,
        cacheWriteTokens: usage.cacheWriteTokens,
        hit: usage.cacheReadTokens > 0,
      });
      failing = false;
    } catch (error) {
      if (failing) return;
      failing = true;
      logger.warn(
        {
          err: error,
          agentId: ids.agentId,
          traceId: ids.traceId,
          hint: 'the cache-trace record was dropped; check free space and permissions of the logs directory',
          errorKind: 'resource',
        },
        'cache trace append failed',
      );
    }
  };
}
