import { join } from 'node:path';
import {
  type AgentRuntime,
  agentCapabilityClass,
  createAgentRuntime,
  createServedWindowMonitor,
  type ServedWindowMonitor,
} from '@agentd/agent-runtime';
import { createTokenStore, type TokenConfig, type TokenStore } from '@agentd/auth-scopes';
import { type BrowserService, createBrowserService, createBrowserTools } from '@agentd/browser';
import {
  type ChannelsService,
  channelsMigrations,
  createChannelsService,
  resolvePlatformSecrets,
} from '@agentd/channels';
import { type ConfigStore, resolveSecretRefs } from '@agentd/config-store';
import {
  createCronService,
  createHeartbeatService,
  type CronService,
  type HeartbeatService,
  summarizeWakeGateFires,
} from '@agentd/cron-wakegate';
import type { AgentTurnRunner } from '@agentd/contracts';
import {
  createGraphService,
  createGraphTools,
  type EventSink,
  type GraphService,
} from '@agentd/graph-engine';
import type { AgentdLogger, RootLogger } from '@agentd/logging';
import { createMemoryService, createMemorySwitch, type MemorySwitch } from '@agentd/memory-store';
import { createObsEvidence, createObsService, type ObsEvidence, type ObsService } from '@agentd/obs-reports';
import { type Database, openDatabase } from '@agentd/storage';
import { createWebhookService, type HookResponseDeliverer, type WebhookService } from '@agentd/webhooks-hmac';
import {
  type ConfigAudit,
  createConfigAudit,
  type CacheTraceStream,
  createSecurityAudit,
  openCacheTrace,
  type SecurityAudit,
  webhookAuditEvent,
} from '@agentd/evidence';
import type { DaemonConfig } from './config-schema.js';
import type { DaemonOptions } from './daemon.js';
import { resolveGraphExecutor } from './graph-runner.js';
import type { Lifecycle } from './lifecycle.js';
import { sharedToolsGate } from './methods/tenancy.js';

/** What the services are started from. */
export interface ServiceContext {
  options: DaemonOptions;
  config: DaemonConfig;
  configStore: ConfigStore<DaemonConfig>;
  dataDir: string;
  /** `<data dir>/logs` or the configured log directory. */
  logDir: string;
  env: NodeJS.ProcessEnv;
  now: () => number;
  logger: RootLogger;
  /** The `daemon` module logger. */
  log: AgentdLogger;
}

/** Every long-lived service of a daemon. */
export interface DaemonServices {
  db: Database;
  obsEvidence: ObsEvidence;
  posture: ServedWindowMonitor;
  securityAudit: SecurityAudit;
  configAudit: ConfigAudit;
  /** `logs/cache-trace.jsonl`; undefined when it could not be opened at start. */
  cacheTrace: CacheTraceStream | undefined;
  /** The memory service while `memory.enabled` is true (opened the first time it is). */
  memory: MemorySwitch;
  tokens: TokenStore;
  /** Token entries may name their secret as ${secret:NAME}; the store only ever sees resolved values. */
  resolveTokens(list: TokenConfig[]): Promise<TokenConfig[]>;
  agentRuntime: AgentRuntime;
  cron: CronService;
  heartbeat: HeartbeatService;
  graph: GraphService;
  obsService: ObsService;
  browser: BrowserService;
  hooks: WebhookService;
  channels: ChannelsService;
}

/**
 * Starts the daemon's services in dependency order, each added to `lifecycle` so a failed
 * start (or a stop) closes what was opened, in reverse.
 */
export async function startServices(context: ServiceContext, lifecycle: Lifecycle): Promise<DaemonServices> {
  return startAgents(context, lifecycle, await startStores(context, lifecycle));
}

/** Opens the config audit, the database, the evidence store, memory, tokens and the cache trace. */
async function startStores(context: ServiceContext, lifecycle: Lifecycle): Promise<Stores> {
  const { options, config, configStore, dataDir, env, now, logger, log } = context;
  // Checked before the database opens: a bad AGENTD_GRAPH_EXECUTOR fails the start cleanly.
  resolveGraphExecutor({ executor: options.graphExecutor, env });

  // Observability: every package's events go to the durable evidence writer (opened below, after
  // the database), then to the embedder's sink.
  let evidenceSink: EventSink | undefined;
  const outerEvents = options.events;
  const events: EventSink = {
    emit: (event, payload) => {
      evidenceSink?.emit(event, payload);
      outerEvents?.emit(event, payload);
    },
  };
  // Security decisions become audit:event rows; config changes also go to logs/config-audit.jsonl.
  // The config audit is opened first so that it is closed last.
  const securityAudit = createSecurityAudit({ events, logger: log });
  const configAudit = await lifecycle.start(
    'config audit',
    () =>
      createConfigAudit({
        logDir: context.logDir,
        maxSizeBytes: options.configAuditMaxBytes,
        maxFiles: config.observability.logRotation.maxFiles,
        compress: config.observability.logRotation.compressAged,
        audit: securityAudit,
        sections: configStore.sections,
        logger: log,
        now,
      }),
    (audit) => audit.close(),
  );
  configStore.onChange(configAudit.onChange);

  const storageConfig = await resolveSecretRefs(config.storage, (name) => env[name]);
  const db = await lifecycle.start(
    'storage',
    () => openDatabase({ dataDir, ...storageConfig, logger: logger.module('storage') }),
    (database) => database.close(),
  );
  const obsEvidence = await lifecycle.service('evidence', () =>
    createObsEvidence({ db, now, logger: logger.module('obs') }),
  );
  evidenceSink = obsEvidence.sink;
  // The standing config posture (fleet rule 7): checked after start and on every providers change.
  const posture = await lifecycle.start(
    'posture',
    () =>
      createServedWindowMonitor({
        record: (found) => obsEvidence.record('config_posture', { ...found }),
        logger: logger.module('obs'),
      }),
    (monitor) => monitor.idle(),
  );
  // The memory store, recall and agent tools, opened the first time `memory.enabled` is true
  // (now or by a later config change).
  const memory = await lifecycle.start(
    'memory',
    async () => {
      const memorySwitch = createMemorySwitch({
        open: async (section) =>
          createMemoryService({
            database: db,
            section: await resolveSecretRefs(section, (name) => env[name]),
            logger: logger.module('memory'),
            events,
          }),
      });
      await memorySwitch.apply(config.memory);
      return memorySwitch;
    },
    (memorySwitch) => memorySwitch.close(),
  );

  const resolveTokens = (list: TokenConfig[]): Promise<TokenConfig[]> =>
    resolveSecretRefs(list, (name) => env[name]);
  const tokens: TokenStore = createTokenStore({
    tokens: await resolveTokens(config.gateway.tokens),
    now,
    persist: async (next) => {
      // Entries already in config.yaml are written back as they are there (a reference stays a
      // reference); only tokens created through the API are added, as hashes.
      const configured = new Map(configStore.current().gateway.tokens.map((entry) => [entry.id, entry]));
      await configStore.patch({
        gateway: { tokens: next.map((entry) => configured.get(entry.id) ?? entry) },
      });
    },
    logger: logger.module('auth'),
  });

  // Prompt-cache figures of every model call (no prompt text) go to a rotating logs/cache-trace.jsonl.
  const cacheTrace = await lifecycle.start(
    'cache trace',
    () =>
      openCacheTrace({
        dataDir,
        logDir: context.logDir,
        tracing: config.daemon.logging.tracing,
        logRotation: config.observability.logRotation,
        now,
        logger: log,
      }),
    (trace) => trace?.close(),
  );
  return {
    events,
    securityAudit,
    configAudit,
    db,
    obsEvidence,
    posture,
    memory,
    tokens,
    resolveTokens,
    cacheTrace,
  };
}

/** What {@link startStores} opened: the storage, evidence and audit layer under the agents. */
type Stores = Omit<
  DaemonServices,
  'agentRuntime' | 'cron' | 'heartbeat' | 'graph' | 'obsService' | 'browser' | 'hooks' | 'channels'
> & {
  events: EventSink;
};

/** Starts the agent runtime and everything that runs turns or serves agents, over `stores`. */
async function startAgents(
  context: ServiceContext,
  lifecycle: Lifecycle,
  stores: Stores,
): Promise<DaemonServices> {
  const { options, config, configStore, dataDir, env, now, logger } = context;
  const { events, db, memory, obsEvidence, securityAudit, cacheTrace } = stores;
  // Agents, providers and sessions: definitions live in config.yaml, sessions and billing in agentd.db.
  const agentRuntime = await lifecycle.service('agent runtime', () =>
    createAgentRuntime({
      ...(cacheTrace ? { cacheTrace } : {}),
      // The evidence files roll by the same policy the start-up sweep applies.
      evidenceRotation: config.observability.logRotation,
      db,
      dataDir,
      agents: config.agents,
      providers: config.providers,
      contextEngine: config.contextEngine,
      resolveSecret: (name) => env[name],
      persistAgents: async (entries) => {
        await configStore.patch(
          { agents: { entries } },
          { message: `agents: update ${Object.keys(entries).join(', ')}` },
        );
      },
      logger: logger.module('agent'),
      now,
      events,
      toolGates: [sharedToolsGate()],
    }),
  );
  // Graph nodes, queued webhook turns and cron jobs run as turns of this runtime,
  // unless an embedder passes its own runner.
  const agentRunner: AgentTurnRunner = options.agentRunner ?? agentRuntime;
  // Scheduling: jobs and heartbeats run their turns through the same runner.
  const cron = await lifecycle.service('cron', () =>
    createCronService({
      db,
      runner: agentRunner,
      workspaceDir: (agentId) => join(dataDir, 'workspaces', agentId),
      ...config.cron,
      wakeGate: { ...config.cron.wakeGate, path: config.cron.wakeGate.path ?? env.PATH },
      now,
      logger: logger.module('scheduler'),
      events,
    }),
  );
  const heartbeat = await lifecycle.service('heartbeat', () =>
    createHeartbeatService({
      db,
      runner: agentRunner,
      settings: config.heartbeat,
      persistSettings: async (patch) => {
        await configStore.patch({ heartbeat: patch });
      },
      now,
      logger: logger.module('scheduler'),
      events,
    }),
  );

  const graph = await lifecycle.service('graph', () =>
    createGraphService({
      db,
      runsDir: join(dataDir, 'graph-runs'),
      executor: resolveGraphExecutor({ executor: options.graphExecutor, runner: agentRunner, env }),
      // pipeline:authored carries the authoring agent's capability class (pipelineAuthoringGate).
      capabilityClassOf: (agentId) => agentCapabilityClass(agentRuntime, agentId),
      events,
      limits: config.graph,
      defaultConcurrency: config.graph.defaultConcurrency,
      maxConcurrency: config.graph.maxConcurrency,
      defaultNodeTimeoutMs: config.graph.defaultNodeTimeoutMs,
      retryDelayMs: config.graph.retryDelayMs,
      memoryRuns: config.graph.memoryRuns,
      logger: logger.module('graph'),
      now,
    }),
  );
  const obsService = createObsService({
    db,
    dataDir,
    evidence: obsEvidence,
    cronWakeGate: (window) => summarizeWakeGateFires(db, window),
    // The runtime writes the evidence in this process: its roll counts spare the readers disk checks.
    evidenceRolls: agentRuntime.evidenceRolls,
    now,
  });

  // Nothing is launched until a browser.* call needs it; the profile lives in the data dir.
  const browser = await lifecycle.start(
    'browser',
    () => createBrowserService({ ...config.browser, dataDir, now, logger: logger.module('browser') }),
    (service) => service.shutdown(),
  );

  // Before the webhooks: `deliver: true` answers go out through the channels' delivery queue.
  const channels = await startChannels(context, lifecycle, {
    db,
    obsEvidence,
    securityAudit,
    runner: agentRunner,
  });

  const hooks = await lifecycle.start(
    'webhooks',
    () =>
      createWebhookService({
        db,
        section: config.webhooks,
        resolveSecrets: (fields) => resolveSecretRefs(fields, (name) => env[name]),
        runner: agentRunner,
        wakeTarget: options.wakeTarget ?? heartbeat,
        deliver: options.deliverHookResponse ?? hookDeliverer(channels),
        onOutcome: (outcome, context) => {
          const event = webhookAuditEvent(outcome, context.verified, context.firstUnsigned);
          if (event) securityAudit.emit(event);
        },
        // Refusing to serve unverified hooks is a security decision.
        onRefused: (refusal) =>
          securityAudit.emit({
            kind: 'webhook',
            classification: 'denied',
            outcome: 'failure',
            severity: 'low',
            ...refusal,
          }),
        logger: logger.module('webhooks'),
        now,
      }),
    (service) => service.close(),
  );

  // Tools the packages give agents; the runtime's denylist and per-agent allow-lists still apply.
  agentRuntime.registerTools([...createBrowserTools(browser), ...createGraphTools({ service: graph })]);
  // Memory's part of the runtime follows `memory.enabled` from the next turn: session.delete /
  // reset_conversation drop the session's memories by the contract's rules, agents with
  // memory.autoRecall get their memories recalled before each turn, and the memory tools.
  memory.onSwitch((service) =>
    agentRuntime.useMemory(
      service && {
        memory: {
          deleteBySession: async (input) => (await service.store.deleteBySession(input)).memoriesDeleted,
        },
        recall: service.autoRecall,
        tools: service.tools,
      },
    ),
  );

  const { events: _events, ...rest } = stores;
  return {
    ...rest,
    agentRuntime,
    cron,
    heartbeat,
    graph,
    obsService,
    browser,
    hooks,
    channels,
  };
}

/**
 * The `channels` section with its secret references resolved per platform: a platform whose
 * secret is missing is logged and left off, the others and the daemon start.
 */
export function resolveChannelSecrets(
  section: DaemonConfig['channels'],
  env: NodeJS.ProcessEnv,
  log: AgentdLogger,
): Promise<DaemonConfig['channels']> {
  return resolvePlatformSecrets(
    section,
    (value) => resolveSecretRefs(value, (name) => env[name]),
    (platform, err) =>
      log.error(
        {
          err,
          channelType: platform,
          errorKind: 'config',
          hint: `set the secret channels.${platform} references, then send SIGHUP`,
        },
        `${platform} left off: a secret reference could not be resolved`,
      ),
  );
}

/** Delivers a webhook mapping's answer to its `channel` and `to` through the delivery queue. */
function hookDeliverer(channels: ChannelsService): HookResponseDeliverer {
  return async ({ channel, to, text }) => {
    if (!channel || !to) throw new Error('the mapping names no channel and recipient (channel, to)');
    const answer = await channels.deliver(channel, { op: 'send', channelId: to, text });
    if (answer.status === 'deadLetter') throw new Error(answer.error ?? 'delivery dead-lettered');
  };
}

/**
 * The chat channels and their delivery queue: every attempt is a delivery trace and channel
 * activity, a refused inbound sender an audit event, inbound messages turns of `runner`.
 */
async function startChannels(
  context: ServiceContext,
  lifecycle: Lifecycle,
  deps: { db: Database; obsEvidence: ObsEvidence; securityAudit: SecurityAudit; runner: AgentTurnRunner },
): Promise<ChannelsService> {
  const { config, env, now, logger } = context;
  const { obsEvidence, securityAudit } = deps;
  return lifecycle.start(
    'channels',
    async () => {
      await deps.db.migrate('@agentd/channels', [...channelsMigrations]);
      const service = createChannelsService({
        db: deps.db,
        section: await resolveChannelSecrets(config.channels, env, logger.module('channels')),
        notifications: config.notifications,
        runner: deps.runner,
        onAttempt: ({ entry, outcome, latencyMs, errorKind }) => {
          obsEvidence.recordDelivery({
            ts: now(),
            channelId: entry.operation.channelId,
            outcome,
            latencyMs,
            ...(errorKind ? { errorKind } : {}),
          });
          if (outcome === 'delivered')
            obsEvidence.recordChannelActivity({
              channelId: entry.operation.channelId,
              channelType: entry.channelType,
              lastActiveAt: now(),
              messagesSent: 1,
              messagesReceived: 0,
            });
        },
        onInbound: (message) =>
          obsEvidence.recordChannelActivity({
            channelId: message.channelId,
            channelType: message.channelType,
            lastActiveAt: now(),
            messagesSent: 0,
            messagesReceived: 1,
          }),
        onRefused: (message) =>
          securityAudit.emit({
            kind: 'auth',
            classification: 'denied',
            outcome: 'failure',
            severity: 'low',
            reason: 'channel_sender_not_allowed',
            channelType: message.channelType,
            channelId: message.channelId,
          }),
        now,
        logger: logger.module('channels'),
      });
      await service.start();
      return service;
    },
    (service) => service.close(),
  );
}
