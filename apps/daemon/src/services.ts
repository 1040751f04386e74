import { join } from 'node:path';
import {
  type AgentRuntime,
  agentCapabilityClass,
  createAgentRuntime,
  createServedWindowMonitor,
  DEFAULT_AGENT_ID,
  type ServedWindowMonitor,
} from '@agentd/agent-runtime';
import { createTokenStore, type TokenConfig, type TokenStore } from '@agentd/auth-scopes';
import { type ApprovalService, createApprovalGate, createApprovalService } from '@agentd/approvals';
import { type AutonomyService, createAutonomyTools, summarizeAutonomy } from '@agentd/autonomy';
import { type BrowserService, createBrowserTools } from '@agentd/browser';
import type { ChannelsService } from '@agentd/channels';
import { type ConfigStore, resolveSecretRefs } from '@agentd/config-store';
import { checkSecretRefs } from './secret-refs.js';
import {
  createCronService,
  createHeartbeatService,
  type CronService,
  type HeartbeatService,
  summarizeWakeGateFires,
} from '@agentd/cron-wakegate';
import type { AgentTurnRunner, SpanSink } from '@agentd/contracts';
import {
  createGraphService,
  createGraphTools,
  type EventSink,
  type GraphService,
} from '@agentd/graph-engine';
import type { AgentdLogger, RootLogger } from '@agentd/logging';
import { createMediaTools, type MediaService } from '@agentd/media';
import { createMemoryService, createMemorySwitch, type MemorySwitch } from '@agentd/memory-store';
import type { McpToolHost } from '@agentd/mcp';
import type { AgentdMetrics } from '@agentd/metrics';
import { createObsEvidence, createObsService, type ObsEvidence, type ObsService } from '@agentd/obs-reports';
import { openSecrets, type Secrets } from '@agentd/secrets';
import { createSkillsService, SKILL_READ_TOOL, type SkillsService } from '@agentd/skills';
import {
  createLearningService,
  dropLifecycleJob,
  ensureLifecycleJob,
  type LearningService,
  lifecycleRunner,
} from '@agentd/learning';
import { canSynthesize, channelReactions, memoryEvictor } from './learning-links.js';
import {
  type Coordinator,
  type Database,
  isPostgresUrl,
  type HostAffinity,
  keyedLock,
  openDatabase,
  openHostAffinity,
  StorageError,
} from '@agentd/storage';
import { checkClusterStart, openCluster } from './cluster.js';
import { firesHere, hostBoundBrowser, hostBoundTerminal, requireHome } from './host-affinity.js';
import { openClusterTokens } from './cluster-tokens.js';
import type { WebhookService } from '@agentd/webhooks-hmac';
import { createWorkspaceTools, type WorkspaceService, workspacePath } from '@agentd/workspace';
import { createTerminalTools, type TerminalService } from '@agentd/terminal';
import { type CacheTraceStream, openCacheTrace } from '@agentd/evidence';
import {
  type ConfigAudit,
  createConfigAudit,
  createSecurityAudit,
  type SecurityAudit,
} from '@agentd/evidence/audit';
import type { DaemonConfig } from './config-schema.js';
import type { DaemonOptions } from './daemon.js';
import { resolveGraphExecutor } from './graph-runner.js';
import type { Lifecycle } from './lifecycle.js';
import { startToolServices } from './tool-services.js';
import { type OrchestrateWiring, wireOrchestrate } from './orchestrate-wiring.js';
import { hookDeliverer, lateImageDeliverer, startChannels } from './channel-services.js';
import {
  clustered,
  createAutonomy,
  followMemory,
  startMcpTools,
  startWebhooks,
} from './agent-service-parts.js';

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
  /** The Prometheus metrics, while `metrics.enabled`: a tap of the event bus, fed by deliveries. */
  metrics?: AgentdMetrics | undefined;
  /** Where turns, model and tool calls, webhook jobs and deliveries go as spans, while tracing is on. */
  spans?: SpanSink | undefined;
}

/** Every long-lived service of a daemon. */
export interface DaemonServices {
  /** The secrets store (or its `.env` fallback): what `${secret:NAME}` resolves from first. */
  secrets: Secrets;
  /** Resolves a `${secret:NAME}` name: the secrets store, then the `.env` file, then the environment. */
  lookupSecret: (name: string) => Promise<string | undefined>;
  db: Database;
  /** Membership, owned rows and the bus: the cluster's on PostgreSQL, the in-process one on libsql. */
  coordinator: Coordinator;
  /** Host-bound handles and agent homes: recorded rows in cluster mode, everything here on libsql. */
  affinity: HostAffinity;
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
  media: MediaService;
  /** The provider media follows with `stt.followMainKey`, kept resolved (see followedMediaProvider). */
  mediaMainProvider: { refresh(): Promise<void> };
  hooks: WebhookService;
  /** Approval gates: the tool gate's state, pending requests and decision caches. */
  approvals: ApprovalService;
  /** Per-agent git workspaces under `<data dir>/workspaces/`. */
  workspace: WorkspaceService;
  /** Agents' terminal drives, run in their workspaces. */
  terminal: TerminalService;
  /** Sub-agent runs, their durable table, leases and run control. */
  autonomy: AutonomyService;
  orchestrate: OrchestrateWiring;
  /** `mcp.servers`: their tools as agent tools, their state for gateway.status. */
  mcpTools: McpToolHost;
  /** Skills: sources, vetted imports, `skill_read` and the permission-manifest gate. */
  skills: SkillsService;
  /** Writes the standing `config_posture` row again with the current imported-skills count. */
  recordPosture(): Promise<void>;
  /** Turn outcomes, learned procedures, the memory lifecycle. */
  learning: LearningService;
  /** Creates or reschedules the `Memory lifecycle` cron job. */
  ensureLifecycleJob(intervalMs: number): Promise<void>;
  /** Removes the `Memory lifecycle` cron job (learning switched off). */
  dropLifecycleJob(): Promise<void>;
  /** Chat platforms and webchat, their delivery queue and inbound routing. */
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
  const taps: EventSink[] = context.metrics ? [context.metrics.events] : [];
  const events: EventSink = {
    emit: (event, payload) => {
      evidenceSink?.emit(event, payload);
      outerEvents?.emit(event, payload);
      for (const tap of taps) tap.emit(event, payload);
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

  // Opened before anything resolves a credential: every ${secret:NAME} resolves from the store
  // first, then the environment. A wrong master key fails the start here, touching nothing.
  // Cluster mode keeps them in the shared database: its URL must be given in plain form there
  // (AGENTD_STORAGE_URL or storage.url), since no secret can be read before the secrets open.
  const plainStorageUrl = env.AGENTD_STORAGE_URL || config.storage.url;
  const secretsDatabaseUrl =
    plainStorageUrl !== undefined && isPostgresUrl(plainStorageUrl) ? plainStorageUrl : undefined;
  // Before anything opens: a cluster start with an unported package, or a sqld URL with cluster
  // settings, is refused naming them all (never a silent single-instance start).
  checkClusterStart(config, plainStorageUrl);
  const secrets = await lifecycle.start(
    'secrets',
    () =>
      openSecrets({
        dataDir,
        databaseUrl: secretsDatabaseUrl,
        env,
        masterKeyFile: config.secrets.masterKeyFile,
        now,
        logger: logger.module('secrets'),
      }),
    (store) => store.close(),
  );
  const lookupSecret = (name: string) => secrets.lookup(name);
  // An unknown name fails the start naming the key that references it, never an empty credential.
  await checkSecretRefs(config, secrets);

  const storageConfig = await resolveSecretRefs(config.storage, lookupSecret);
  // AGENTD_STORAGE_URL wins over storage.url (a postgres:// URL there selects cluster mode).
  const storageUrl = env.AGENTD_STORAGE_URL || storageConfig.url;
  // Again with a URL given as a ${secret:…} reference, now resolved.
  checkClusterStart(config, storageUrl);
  if (storageUrl !== undefined && isPostgresUrl(storageUrl) && secretsDatabaseUrl === undefined) {
    throw new StorageError(
      'INVALID_OPTIONS',
      'Cluster mode needs the postgres:// URL in AGENTD_STORAGE_URL or a plain storage.url, not a ${secret:…} reference: the secrets themselves live in that database',
    );
  }
  const db = await lifecycle.start(
    'storage',
    () => openDatabase({ dataDir, ...storageConfig, url: storageUrl, logger: logger.module('storage') }),
    (database) => database.close(),
  );
  // Membership (cluster mode: joined, heartbeats and sweeper) before any package uses the database.
  const coordinator = await lifecycle.start(
    'cluster',
    () => openCluster({ db, config, log }),
    (opened) => opened.close(),
  );
  const affinity = await lifecycle.start(
    'affinity',
    () =>
      openHostAffinity({
        db,
        coordinator,
        leaseMs: config.cluster.leaseMs,
        logger: logger.module('cluster'),
      }),
    (opened) => opened.close(),
  );
  const obsEvidence = await lifecycle.service('evidence', () =>
    createObsEvidence({ db, now, logger: logger.module('obs') }),
  );
  evidenceSink = obsEvidence.sink;
  // Skills: the daemon directory and imports live under <data dir>/skills. Which tools an agent
  // may use is asked of the runtime once it exists (a skill cannot widen them).
  let skillLinks: SkillLinks = {
    toolsDenied: (_agentId, tools) => [...tools],
    learned: async () => [],
    onRead: () => undefined,
  };
  const skills = createSkillsService({
    dataDir,
    section: config.skills,
    audit: securityAudit,
    missingTools: (agentId, tools) => skillLinks.toolsDenied(agentId, tools),
    learned: (agentId) => skillLinks.learned(agentId),
    onRead: (traceId, name) => skillLinks.onRead(traceId, name),
    now,
    logger: logger.module('agent'),
  });
  // Skills named in skills.import.blocked while the daemon was down are removed before any turn.
  await skills.removeBlocked();
  // The standing config posture (fleet rule 7): one row holds the served-window check (after
  // start and on every providers change) and the imported skills outside the allowlist.
  let served: Record<string, unknown> = {};
  const recordPosture = async () => {
    obsEvidence.record('config_posture', {
      ...served,
      importedSkillsOutsideAllowlist: await skills.importedOutsideAllowlist(),
    });
  };
  const posture = await lifecycle.start(
    'posture',
    () =>
      createServedWindowMonitor({
        record: (found) => {
          served = { ...found };
          void recordPosture().catch((error: unknown) =>
            log.warn(
              {
                err: error,
                step: 'posture',
                errorKind: 'internal',
                hint: 'the next posture check records it',
              },
              'posture row not recorded',
            ),
          );
        },
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
            // In cluster mode each instance's vector index follows the others' writes.
            ...(coordinator.mode === 'postgres' ? { bus: coordinator.bus } : {}),
            section,
            resolveSecrets: (raw) => resolveSecretRefs(raw, lookupSecret),
            logger: logger.module('memory'),
            events,
          }),
      });
      await memorySwitch.apply(config.memory);
      return memorySwitch;
    },
    (memorySwitch) => memorySwitch.close(),
  );

  // Cluster mode keeps API tokens in the auth_tokens table, shared by every instance; the
  // embedded default writes them into config.yaml as before.
  const clusterTokens =
    coordinator.mode === 'postgres'
      ? await openClusterTokens({
          db,
          coordinator,
          configuredIds: () => new Set(configStore.current().gateway.tokens.map((entry) => entry.id)),
          log: logger.module('auth'),
        })
      : undefined;
  const resolveTokens = async (list: TokenConfig[]): Promise<TokenConfig[]> => {
    const resolved = await resolveSecretRefs(list, lookupSecret);
    return clusterTokens ? clusterTokens.withStored(resolved) : resolved;
  };
  const tokens: TokenStore = createTokenStore({
    tokens: await resolveTokens(config.gateway.tokens),
    now,
    persist:
      clusterTokens?.persist ??
      (async (next) => {
        // Entries already in config.yaml are written back as they are there (a reference stays a
        // reference); only tokens created through the API are added, as hashes.
        const configured = new Map(configStore.current().gateway.tokens.map((entry) => [entry.id, entry]));
        await configStore.patch({
          gateway: { tokens: next.map((entry) => configured.get(entry.id) ?? entry) },
        });
      }),
    logger: logger.module('auth'),
  });
  if (clusterTokens) {
    const stopFollowing = clusterTokens.follow(tokens, () =>
      resolveSecretRefs(configStore.current().gateway.tokens, lookupSecret),
    );
    lifecycle.add('token follower', async () => stopFollowing());
  }

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
    tap: (sink) => {
      taps.push(sink);
    },
    skills,
    recordPosture,
    bindSkills: (links) => {
      skillLinks = links;
    },
    secrets,
    lookupSecret,
    events,
    securityAudit,
    configAudit,
    db,
    coordinator,
    affinity,
    obsEvidence,
    posture,
    memory,
    tokens,
    resolveTokens,
    cacheTrace,
  };
}

/** What {@link startStores} opened: the storage, evidence and audit layer under the agents. */
export type Stores = Omit<
  DaemonServices,
  | 'agentRuntime'
  | 'cron'
  | 'heartbeat'
  | 'graph'
  | 'obsService'
  | 'browser'
  | 'media'
  | 'mediaMainProvider'
  | 'hooks'
  | 'approvals'
  | 'workspace'
  | 'terminal'
  | 'autonomy'
  | 'orchestrate'
  | 'mcpTools'
  | 'learning'
  | 'ensureLifecycleJob'
  | 'dropLifecycleJob'
  | 'channels'
> & {
  events: EventSink;
  /** Links the skills service to the runtime's tool policy and to learning, once they exist. */
  bindSkills(links: SkillLinks): void;
  /** Adds an in-process listener to the daemon's events (after the evidence store and the embedder's sink). */
  tap(sink: EventSink): void;
};

/** What the skills service asks of parts started after it. */
interface SkillLinks {
  toolsDenied(agentId: string, tools: readonly string[]): string[];
  learned(agentId: string): Promise<Array<{ name: string; description: string; body: string }>>;
  onRead(traceId: string, name: string): void;
}

/** Starts the agent runtime and everything that runs turns or serves agents, over `stores`. */
async function startAgents(
  context: ServiceContext,
  lifecycle: Lifecycle,
  stores: Stores,
): Promise<DaemonServices> {
  const { options, config, configStore, dataDir, env, now, logger } = context;
  const { events, db, memory, obsEvidence, securityAudit, cacheTrace, lookupSecret, skills } = stores;
  // Approval gates: before the runtime, whose tool gate chain asks them and whose session.reset
  // clears their cached decisions. Requests a previous process left pending are denied at start.
  const approvals = await lifecycle.service('approvals', () =>
    createApprovalService({
      db,
      // Cluster mode: a decision on any instance releases the waiter on this one.
      ...clustered(stores.coordinator),
      config: config.approvals,
      audit: securityAudit,
      logger: logger.module('agent'),
      now,
    }),
  );
  // Created before the runtime, whose tool gates include its lease gate; it reads the runtime
  // only when a run starts.
  let runtimeRef: AgentRuntime | undefined;
  const autonomy = createAutonomy(context, stores, () => runtimeRef);
  // Agents, providers and sessions: definitions live in config.yaml, sessions and billing in agentd.db.
  const agentRuntime = await lifecycle.service('agent runtime', () =>
    createAgentRuntime({
      ...(cacheTrace ? { cacheTrace } : {}),
      // Cluster mode: a session's turns are serialised across instances, their writes fenced.
      ...(stores.coordinator.mode === 'postgres'
        ? {
            sessionLocks: keyedLock(stores.coordinator, 'session', {
              renewEveryMs: Math.floor((config.cluster.leaseMs ?? 10_000) / 3),
            }),
          }
        : {}),
      ...(context.spans ? { spans: context.spans } : {}),
      // The evidence files roll by the same policy the start-up sweep applies.
      evidenceRotation: config.observability.logRotation,
      db,
      dataDir,
      agents: config.agents,
      providers: config.providers,
      contextEngine: config.contextEngine,
      resolveSecret: lookupSecret,
      persistAgents: async (entries) => {
        await configStore.patch(
          { agents: { entries } },
          { message: `agents: update ${Object.keys(entries).join(', ')}` },
        );
      },
      logger: logger.module('agent'),
      now,
      events,
      // After the runtime's own tenant gate: skills' permission manifests, then leases and
      // capabilities, then a human's yes: a call refused anyway never waits for an approval.
      toolGates: [skills.gate, autonomy.gate(), createApprovalGate(approvals)],
      approvals,
    }),
  );
  runtimeRef = agentRuntime;
  // Graph nodes, queued webhook turns and cron jobs run as turns of this runtime,
  // unless an embedder passes its own runner.
  const agentRunner: AgentTurnRunner = options.agentRunner ?? agentRuntime;
  // Scheduling: jobs and heartbeats run their turns through the same runner.
  // The `Memory lifecycle` job's runs are learning sweeps, not model turns.
  let learningRef: LearningService | undefined;
  let lifecycleSession: string | undefined;
  const cron = await lifecycle.service('cron', () =>
    createCronService({
      db,
      // Cluster mode: fires are compare-and-sets on the due time; the heartbeat runs in a singleton.
      ...clustered(stores.coordinator),
      runner: lifecycleRunner(
        agentRunner,
        () => learningRef,
        () => lifecycleSession,
      ),
      workspaceDir: (agentId) => workspacePath(dataDir, agentId),
      // Cluster mode: a homed agent's jobs fire on its home only.
      firesHere: (agentId) => firesHere(stores.affinity, agentRuntime, agentId),
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
      ...clustered(stores.coordinator),
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
      // Cluster mode: runs owned and leased, outputs in a table, cancels reach the owner.
      ...clustered(stores.coordinator),
      runLeaseMs: config.cluster.leaseMs,
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
    // Cluster mode: the file-based parts of a report cover this instance only, and say so.
    ...(stores.coordinator.mode === 'postgres' ? { clusterInstanceId: stores.coordinator.instanceId } : {}),
    dataDir,
    evidence: obsEvidence,
    cronWakeGate: (window) => summarizeWakeGateFires(db, window),
    autonomy: (window) => summarizeAutonomy(db, window),
    // The runtime writes the evidence in this process: its roll counts spare the readers disk checks.
    evidenceRolls: agentRuntime.evidenceRolls,
    now,
  });

  // Media starts before the channels; a generated image reaches them once they run.
  const images = lateImageDeliverer();
  const tools = await startToolServices(context, lifecycle, {
    events,
    lookupSecret,
    deliverImage: images.deliverImage,
  });
  const { media, mediaMainProvider, workspace } = tools;
  // Tabs and drives are recorded with this instance: named on another, they answer -32010.
  const browser = hostBoundBrowser(tools.browser, stores.affinity);
  const terminal = hostBoundTerminal(tools.terminal, stores.affinity);

  // Before the webhooks: `deliver: true` answers go out through the channels' delivery queue.
  const channels = await startChannels(context, lifecycle, {
    db,
    // Cluster mode: polling connectors (Telegram, Discord, Slack Socket Mode) on one instance.
    ...clustered(stores.coordinator),
    obsEvidence,
    securityAudit,
    runner: agentRunner,
    lookupSecret,
    reactions: channelReactions(() => learningRef),
    // Cluster mode: the inbound messages of an agent homed on another instance are left for it.
    inboundPlacement: {
      runsHere: (agentId) => firesHere(stores.affinity, agentRuntime, agentId),
      claimWhere: stores.affinity.notHomedElsewhere('agent_id', DEFAULT_AGENT_ID),
    },
  });
  images.attach(channels);

  const hooks = await startWebhooks(context, lifecycle, stores, {
    runner: agentRunner,
    wakeTarget: options.wakeTarget ?? heartbeat,
    deliver: options.deliverHookResponse ?? hookDeliverer(channels),
  });

  // Tools the packages give agents; the runtime's denylist and per-agent allow-lists still apply.
  agentRuntime.registerTools([
    ...createBrowserTools(browser),
    ...createGraphTools({ service: graph }),
    ...createMediaTools(media),
    ...createWorkspaceTools(workspace),
    ...createTerminalTools(terminal),
    ...createAutonomyTools(autonomy),
    ...skills.tools,
  ]);
  // After the tools exist (a resumed run's tool set is fixed already) and stopped before the
  // runtime closes: a stop aborts running runs and leaves them `running` for the next start.
  await lifecycle.service('autonomy', () => autonomy);
  // Scripts in the bubblewrap jail, reaching tools only through the capability socket.
  const orchestrate = wireOrchestrate({
    section: config.orchestrate,
    agentRuntime,
    autonomy,
    workspace,
    media,
    events,
    logger: logger.module('orchestrate'),
    now,
  });
  // Agents offered skill_read get their usable skills' names and descriptions in the prompt.
  // Learning: every turn's outcome, the learned procedures (listed as `learned` skills) and the
  // `Memory lifecycle` cron job whose runs are the sweeps.
  const learning = await lifecycle.service('learning', () =>
    createLearningService({
      db,
      section: config.learning,
      events,
      runner: agentRunner,
      canSynthesize: (agentId) => canSynthesize(agentRuntime, agentId),
      evictMemory: () => memoryEvictor(memory, logger.module('memory')),
      now,
      logger: logger.module('agent'),
    }),
  );
  learningRef = learning;
  // A deleted or reset session, or a reset conversation, takes its outcome rows (message starts) along.
  stores.tap({
    emit: (event, payload) => {
      if (event !== 'session:deleted' && event !== 'session:conversation_reset' && event !== 'session:reset')
        return;
      const key = (payload as { sessionKey?: unknown }).sessionKey;
      if (typeof key === 'string') void learning.forgetSession(key);
    },
  });
  agentRuntime.useTurnObserver((turn) => learning.observeTurn(turn));
  // Cluster mode: every turn (RPC, chat stream, `/v1`, webhook, channel, sub-agent) of an agent
  // with host-bound tools takes its home, or is refused with -32010 where another instance has it.
  if (stores.coordinator.mode === 'postgres')
    agentRuntime.useTurnPlacement((agentId) => requireHome(stores.affinity, agentRuntime, agentId));
  stores.bindSkills({
    toolsDenied: (agentId, tools) => agentRuntime.toolsDenied(agentId, tools),
    learned: (agentId) => learning.learnedSkills(agentId),
    onRead: (traceId, name) => learning.noteSkillRead(traceId, name),
  });
  if (config.learning.enabled)
    lifecycleSession = await ensureLifecycleJob(cron, config.learning.sweepIntervalMs);
  else await dropLifecycleJob(cron);
  agentRuntime.useSkills({
    readTool: SKILL_READ_TOOL,
    promptBlock: (agentId) => skills.promptBlock(agentId),
  });
  followMemory(memory, agentRuntime, () => learningRef);

  const mcpTools = await startMcpTools(context, lifecycle, agentRuntime, approvals, lookupSecret);
  // capabilities.introspect shows the servers' state and tools beside the caller's runs.
  autonomy.useToolServers(() => mcpTools.status());

  const { events: _events, bindSkills: _bind, tap: _tap, ...rest } = stores;
  return {
    ...rest,
    mcpTools,
    agentRuntime,
    cron,
    heartbeat,
    graph,
    obsService,
    browser,
    media,
    mediaMainProvider,
    workspace,
    terminal,
    hooks,
    approvals,
    autonomy,
    orchestrate,
    learning,
    ensureLifecycleJob: async (intervalMs) => {
      lifecycleSession = await ensureLifecycleJob(cron, intervalMs);
    },
    dropLifecycleJob: async () => {
      await dropLifecycleJob(cron);
    },
    channels,
  };
}
