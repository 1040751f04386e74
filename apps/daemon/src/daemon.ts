import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isAbsolute, join, resolve } from 'node:path';
import {
  type AgentRuntime,
  createAgentRuntime,
  createServedWindowMonitor,
  sweepEvidence,
} from '@agentd/agent-runtime';
import {
  createTokenStore,
  ensureBootstrapToken,
  extractBearer,
  hasScope,
  SlidingWindowLimiter,
  type Identity,
  type Scope,
  type TokenConfig,
  type TokenStore,
} from '@agentd/auth-scopes';
import {
  type ConfigStore,
  type ConfigStoreLogger,
  createConfigStore,
  resolveSecretRefs,
} from '@agentd/config-store';
import {
  type AgentTurnRunner,
  createGraphService,
  createGraphTools,
  type EventSink,
  type GraphService,
  type NodeExecutor,
} from '@agentd/graph-engine';
import { type BrowserService, createBrowserService, createBrowserTools } from '@agentd/browser';
import {
  createLogger,
  resolveDaemonLogOptions,
  type RootLogger,
  runWithTrace,
  sweepLogs,
} from '@agentd/logging';
import {
  type Authorize,
  createDispatcher,
  createHttpRpcHandler,
  createWebSocketTransport,
  MethodRegistry,
  rpcDiscoverMethod,
  type Dispatcher,
  type MethodDefinition,
  type WebSocketTransport,
} from '@agentd/rpc-core';
import { type Database, openDatabase } from '@agentd/storage';
import {
  createWebhookService,
  type HookResponseDeliverer,
  type WakeTarget,
  type WebhookService,
} from '@agentd/webhooks-hmac';
import {
  createCronService,
  createHeartbeatService,
  type HeartbeatService,
  summarizeWakeGateFires,
} from '@agentd/cron-wakegate';
import { createMemoryService, type MemoryService } from '@agentd/memory-store';
import { createObsEvidence, createObsService } from '@agentd/obs-reports';
import { configSections, type DaemonConfig } from './config-schema.js';
import {
  createConfigAudit,
  createSecurityAudit,
  openCacheTrace,
  runAsActor,
  webhookAuditEvent,
} from '@agentd/evidence';
import { browserMethods } from './methods/browser.js';
import { createGatewayPool } from './gateway-pool.js';
import { createLiveConfig, registerDaemonAppliers } from './live-config.js';
import { createChatStreamHandler } from './chat-stream.js';
import { agentMethods } from './methods/agent.js';
import { agentsMethods } from './methods/agents.js';
import { configMethods } from './methods/config.js';
import { resolveGraphExecutor } from './graph-runner.js';
import { cronMethods } from './methods/cron.js';
import { heartbeatMethods } from './methods/heartbeat.js';
import { schedulerMethods } from './methods/scheduler.js';
import { daemonMethods } from './methods/daemon.js';
import { gatewayMethods } from './methods/gateway.js';
import { graphMethods } from './methods/graph.js';
import { modelsMethods } from './methods/models.js';
import { obsMethods } from './methods/obs.js';
import { obsBillingMethods } from './methods/obs-billing.js';
import { sessionMethods } from './methods/session.js';
import { systemMethods } from './methods/system.js';
import { tokenMethods } from './methods/tokens.js';
import { plaintextTokenGuard } from './token-policy.js';
import { memoryMethods } from './methods/memory.js';
import { VERSION } from './version.js';

/** Options of {@link startDaemon}. */
export interface DaemonOptions {
  /** Data directory (config.yaml, agentd.db, logs/). @default './data' */
  dataDir?: string;
  /** Overrides `gateway.host` for this run. */
  host?: string;
  /** Overrides `gateway.port` for this run; 0 picks a free port. */
  port?: number;
  /** Environment for `AGENTD_ADMIN_TOKEN` and secret references. @default process.env */
  env?: NodeJS.ProcessEnv;
  /** Where one-time notices (the bootstrap token) are printed. @default console.log */
  print?: (line: string) => void;
  /** Also write log lines to stdout (the CLI does; tests do not). @default false */
  logToStdout?: boolean;
  /** Clock. @default Date.now */
  now?: () => number;
  /** Extra methods to serve beside the built-in ones (embedders, tests). */
  methods?: MethodDefinition[];
  /**
   * The agent runtime's turn runner: graph nodes run as its turns when no graphExecutor is given,
   * and queued webhook agent turns are drained through it (until one is given they wait in libsql).
   */
  agentRunner?: AgentTurnRunner;
  /**
   * Runs graph nodes instead of the agent runtime (embedders, tests); `AGENTD_GRAPH_EXECUTOR=echo`
   * selects the deterministic echo executor instead.
   */
  graphExecutor?: NodeExecutor;
  /** Receives internal events such as `pipeline:authored`, `memory:recalled`. @default a sink that drops them */
  events?: EventSink;
  /** Receives webhook `wake` actions instead of the daemon's own heartbeat (embedders, tests). */
  wakeTarget?: WakeTarget;
  /** Channel delivery of webhook agent answers (`deliver: true`). */
  deliverHookResponse?: HookResponseDeliverer;
  /** Size at which `logs/config-audit.jsonl` rolls (tests use a small one). @default 10485760 (10 MB) */
  configAuditMaxBytes?: number;
}

/** A running daemon. */
export interface RunningDaemon {
  readonly host: string;
  readonly port: number;
  /** `http://host:port` */
  readonly url: string;
  /** `ws://host:port/ws` */
  readonly wsUrl: string;
  readonly dataDir: string;
  readonly logger: RootLogger;
  /** The memory store, recall and agent tools; undefined with `memory.enabled: false`. */
  readonly memory: MemoryService | undefined;
  /** The heartbeat: webhook `wake` actions call its `wakeNow` / `queueForNextBeat`. */
  readonly heartbeat: HeartbeatService;
  /**
   * Sends a JSON-RPC notification: to every socket of `clientId`, or to every connected
   * client when `clientId` is undefined (notifications that cannot be targeted).
   */
  notify(clientId: string | undefined, method: string, params: unknown): void;
  /** Re-read config from disk and apply the hot sections (SIGHUP). */
  reload(): Promise<void>;
  /** In-process re-init: clients are closed with 1001 and may reconnect. */
  restart(): Promise<void>;
  /** Graceful shutdown: in-flight requests finish, sockets close with 1001. */
  stop(): Promise<void>;
}

interface Gateway {
  dispatcher: Dispatcher;
  ws: WebSocketTransport;
  http: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
}

/** Starts the daemon: config, logging, storage, tokens, methods, HTTP + WebSocket server. */
export async function startDaemon(options: DaemonOptions = {}): Promise<RunningDaemon> {
  const now = options.now ?? Date.now;
  const startedAt = now();
  const env = options.env ?? process.env;
  const print = options.print ?? ((line: string) => console.log(line));
  const dataDir = resolve(options.dataDir ?? env.AGENTD_DATA_DIR ?? './data');
  mkdirSync(dataDir, { recursive: true });

  // The config decides the log levels, so the config store's logger is attached once the logger exists.
  const configLog = forwardingLogger();
  const configStore: ConfigStore<DaemonConfig> = createConfigStore({
    dataDir,
    sections: configSections,
    logger: configLog,
  });
  await configStore.load();
  let config = readConfig(configStore);

  const logOptions = resolveDaemonLogOptions({
    dataDir,
    daemon: withAbsoluteLogPath(dataDir, config.daemon),
    logRotation: config.observability.logRotation,
  });
  // The sweep renames rotated files, so it runs before the logger opens the live one.
  const sweepError = await sweepLogs({ ...logOptions.sweep, now }).then(
    () => undefined,
    (error: unknown) => error,
  );
  // The evidence files (session index, trajectories, offloads) follow the same policy; the
  // runtime that writes them starts later.
  const evidenceSweep = await sweepEvidence({
    dataDir,
    rotation: config.observability.logRotation,
    now,
  }).then(
    (result) => ({ failed: result.errors.length, error: result.errors[0]?.error }),
    (error: unknown) => ({ failed: 1, error }),
  );
  const logger = createLogger({
    level: 'info',
    logLevels: config.daemon.logLevels,
    destination: logOptions.file,
    alsoStdout: options.logToStdout ?? false,
  });
  const log = logger.module('daemon');
  configLog.attach(logger.module('config'));
  if (sweepError) {
    log.warn(
      { err: sweepError, hint: 'check permissions of the logs directory', errorKind: 'resource' },
      'log sweep failed',
    );
  }
  if (evidenceSweep.failed > 0) {
    log.warn(
      {
        err: evidenceSweep.error,
        count: evidenceSweep.failed,
        hint: 'check permissions of the obs directory',
        errorKind: 'resource',
      },
      'evidence sweep failed',
    );
  }

  // Checked before the database opens: a bad AGENTD_GRAPH_EXECUTOR fails the start cleanly.
  resolveGraphExecutor({ executor: options.graphExecutor, env });
  const storageConfig = await resolveSecretRefs(config.storage, (name) => env[name]);
  const db: Database = await openDatabase({ dataDir, ...storageConfig, logger: logger.module('storage') });
  // Observability: every package's events go to the durable evidence writer, then to the embedder's sink.
  const obsEvidence = createObsEvidence({ db, now, logger: logger.module('obs') });
  await obsEvidence.start();
  // The standing config posture (fleet rule 7): checked after start and on every providers change.
  const posture = createServedWindowMonitor({
    record: (found) => obsEvidence.record('config_posture', { ...found }),
    logger: logger.module('obs'),
  });
  const outerEvents = options.events;
  const events: EventSink = {
    emit: (event, payload) => {
      obsEvidence.sink.emit(event, payload);
      outerEvents?.emit(event, payload);
    },
  };
  // Security decisions become audit:event rows; config changes also go to logs/config-audit.jsonl.
  const securityAudit = createSecurityAudit({ events, logger: log });
  const configAudit = createConfigAudit({
    logDir: logOptions.sweep.dir,
    maxSizeBytes: options.configAuditMaxBytes,
    maxFiles: config.observability.logRotation.maxFiles,
    compress: config.observability.logRotation.compressAged,
    audit: securityAudit,
    sections: configStore.sections,
    logger: log,
    now,
  });
  configStore.onChange(configAudit.onChange);
  // The memory store, recall and agent tools; undefined with `memory.enabled: false`.
  const memory: MemoryService | undefined = config.memory.enabled
    ? await createMemoryService({
        database: db,
        section: config.memory,
        resolveSecrets: (section) => resolveSecretRefs(section, (name) => env[name]),
        logger: logger.module('memory'),
        events,
      })
    : undefined;

  // Token entries may name their secret as ${secret:NAME}; the store only ever sees resolved values.
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
  const cacheTrace = await openCacheTrace({
    dataDir,
    logDir: logOptions.sweep.dir,
    tracing: config.daemon.logging.tracing,
    logRotation: config.observability.logRotation,
    now,
    logger: log,
  });
  // Agents, providers and sessions: definitions live in config.yaml, sessions and billing in agentd.db.
  const agentRuntime: AgentRuntime = createAgentRuntime({
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
    // session.delete / reset_conversation drop the session's memories by the contract's rules.
    ...(memory
      ? {
          memory: {
            deleteBySession: async (input: { agentId: string; sessionKey: string; purgeDerived: boolean }) =>
              (await memory.store.deleteBySession(input)).memoriesDeleted,
          },
          // Agents with memory.autoRecall get their memories recalled before each turn.
          recall: memory.autoRecall,
        }
      : {}),
    events,
  });
  await agentRuntime.start();
  // Graph nodes, queued webhook turns and (later) cron jobs run as turns of this runtime,
  // unless an embedder passes its own runner.
  const agentRunner: AgentTurnRunner = options.agentRunner ?? agentRuntime;
  // Scheduling: jobs and heartbeats run their turns through the same runner.
  const cron = createCronService({
    db,
    runner: agentRunner,
    workspaceDir: (agentId) => join(dataDir, 'workspaces', agentId),
    ...config.cron,
    wakeGate: { ...config.cron.wakeGate, path: config.cron.wakeGate.path ?? env.PATH },
    now,
    logger: logger.module('scheduler'),
    events,
  });
  const heartbeat = createHeartbeatService({
    db,
    runner: agentRunner,
    settings: config.heartbeat,
    persistSettings: async (patch) => {
      await configStore.patch({ heartbeat: patch });
    },
    now,
    logger: logger.module('scheduler'),
    events,
  });
  await cron.start();
  await heartbeat.start();
  const graphExecutor = resolveGraphExecutor({ executor: options.graphExecutor, runner: agentRunner, env });

  const graph: GraphService = createGraphService({
    db,
    runsDir: join(dataDir, 'graph-runs'),
    executor: graphExecutor,
    // pipeline:authored carries the authoring agent's capability class (pipelineAuthoringGate).
    capabilityClassOf: (agentId) => capabilityClassOf(agentRuntime, agentId),
    events,
    limits: config.graph,
    defaultConcurrency: config.graph.defaultConcurrency,
    maxConcurrency: config.graph.maxConcurrency,
    defaultNodeTimeoutMs: config.graph.defaultNodeTimeoutMs,
    retryDelayMs: config.graph.retryDelayMs,
    memoryRuns: config.graph.memoryRuns,
    logger: logger.module('graph'),
    now,
  });
  await graph.start();
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
  const browser: BrowserService = createBrowserService({
    ...config.browser,
    dataDir,
    now,
    logger: logger.module('browser'),
  });

  const hooks: WebhookService = await createWebhookService({
    db,
    section: config.webhooks,
    resolveSecrets: (fields) => resolveSecretRefs(fields, (name) => env[name]),
    runner: agentRunner,
    wakeTarget: options.wakeTarget ?? heartbeat,
    deliver: options.deliverHookResponse,
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
  });

  // Tools the packages give agents; the runtime's denylist and per-agent allow-lists still apply.
  agentRuntime.registerTools([
    ...createBrowserTools(browser),
    ...createGraphTools({ service: graph }),
    ...(memory?.tools ?? []),
  ]);

  let restarting: Promise<void> | undefined;
  const control = {
    startedAt,
    configPaths: () => [configStore.filePath],
    sections: () => configStore.sections,
    scheduleRestart: () => {
      // Answer first, then re-init: the caller sees the confirmation before its socket is closed.
      setTimeout(() => {
        restart().catch((err: unknown) =>
          log.error(
            {
              err,
              hint: 'fix config.yaml, then call gateway.restart again; the old gateway keeps serving',
              errorKind: 'config',
            },
            'gateway restart failed',
          ),
        );
      }, 20);
    },
  };

  const registry = new MethodRegistry();
  for (const method of [
    ...systemMethods({ now }),
    ...gatewayMethods({ control, now, audit: securityAudit }),
    ...daemonMethods({ logger, audit: securityAudit }),
    ...configMethods({
      store: configStore,
      checkWrite: plaintextTokenGuard(() => configStore.current().gateway.tokens),
      audit: configAudit,
    }),
    ...tokenMethods({ tokens, audit: securityAudit }),
    ...graphMethods({ graph, limits: config.graph, maxConcurrency: config.graph.maxConcurrency }),
    ...browserMethods({ browser }),
    ...agentMethods({ runtime: agentRuntime }),
    ...agentsMethods({ runtime: agentRuntime }),
    ...modelsMethods({ runtime: agentRuntime }),
    ...sessionMethods({ runtime: agentRuntime }),
    ...obsBillingMethods({ runtime: agentRuntime }),
    ...obsMethods({
      service: obsService,
      evidence: obsEvidence,
      db,
      contextEngine: config.contextEngine,
      now,
      audit: securityAudit,
    }),
    ...memoryMethods({ store: memory?.store }),
    ...cronMethods({ cron }),
    ...schedulerMethods({ heartbeat }),
    ...heartbeatMethods({ heartbeat }),
    ...(options.methods ?? []),
  ]) {
    registry.register(method);
  }
  registry.register(rpcDiscoverMethod(registry, { title: 'agentd', version: VERSION }));

  // Denied authentications and scope checks are security audit events (obs.audit.query);
  // they carry the transport and the token id (as `caller`), never the presented secret.
  const audit = securityAudit.emit;
  const authenticateVia = (transport: 'ws' | 'http', allowQuery: boolean) => {
    return (req: IncomingMessage): Identity | null => {
      const presented = extractBearer(req, { allowQuery });
      const identity = tokens.authenticate(presented);
      if (!identity) {
        audit({
          kind: 'auth',
          classification: 'denied',
          outcome: 'failure',
          severity: presented ? 'medium' : 'low',
          transport,
          reason: presented ? 'invalid_token' : 'missing_token',
        });
      }
      return identity;
    };
  };
  const authenticateWs = authenticateVia('ws', true);
  const authenticateHttp = authenticateVia('http', false);
  const authorizeScope: Authorize = (identity, scope) => {
    const allowed = hasScope(identity.scopes as readonly Scope[], scope);
    if (!allowed) {
      audit({
        kind: 'scope',
        classification: 'denied',
        outcome: 'failure',
        severity: 'medium',
        caller: identity.tokenId,
        requiredScope: scope,
      });
    }
    return allowed;
  };

  const buildGateway = (cfg: DaemonConfig): Gateway => {
    const dispatcher = createDispatcher({
      registry,
      authorize: authorizeScope,
      logger: logger.module('gateway'),
      maxBatchSize: cfg.gateway.maxBatchSize,
      maxMessageBytes: cfg.gateway.wsMaxMessageBytes,
      wrap: (ctx, run) =>
        runWithTrace(
          {
            traceId: ctx.traceId,
            connectionId: ctx.connectionId,
            clientId: ctx.clientId,
            method: ctx.method,
            requestId: ctx.requestId,
          },
          // Admin calls carry their caller, so config they persist (tokens, agents) is attributed.
          registry.get(ctx.method)?.scope === 'admin'
            ? () => runAsActor({ method: ctx.method, tokenId: ctx.identity.tokenId }, run)
            : run,
        ),
    });
    const { maxMessages, windowMs } = cfg.gateway.wsMessageRateLimit;
    const ws = createWebSocketTransport({
      dispatcher,
      authenticate: authenticateWs,
      heartbeatMs: cfg.gateway.wsHeartbeatMs,
      maxMessageBytes: cfg.gateway.wsMaxMessageBytes,
      logger: logger.module('gateway'),
      // maxMessages 0 turns the limiter off (benchmarks, trusted local clients).
      ...(maxMessages > 0
        ? { createRateLimiter: () => new SlidingWindowLimiter({ maxEvents: maxMessages, windowMs }) }
        : {}),
    });
    const http = createHttpRpcHandler({
      dispatcher,
      authenticate: authenticateHttp,
      logger: logger.module('gateway'),
      maxBodyBytes: cfg.gateway.wsMaxMessageBytes,
    });
    return { dispatcher, ws, http };
  };

  // Changed limits build a new generation for new connections; open sockets keep theirs.
  const gateway = createGatewayPool(() => buildGateway(config));
  tokens.onRevoke((tokenId) => {
    gateway.ws.closeWhere((identity) => identity.tokenId === tokenId, 4001, 'Token revoked');
  });

  // The one apply path: every committed change (writes, SIGHUP, gateway.restart) reaches here.
  const liveConfig = createLiveConfig({ initial: config, logger: logger.module('config') });
  registerDaemonAppliers(liveConfig, {
    logger,
    log,
    env,
    tokens,
    resolveTokens,
    heartbeat,
    agentRuntime,
    browser,
    graph,
    cron,
    memory,
    renewGateway: () => gateway.renew(),
    checkPosture: (providers) => void posture.check(providers),
    webhooks: hooks,
  });
  configStore.onChange((cfg, change) => {
    config = cfg;
    return liveConfig.apply(cfg, change.changedSections);
  });

  const chatStream = createChatStreamHandler({
    runtime: agentRuntime,
    authenticate: authenticateWs,
    authorize: (identity) => hasScope(identity.scopes as readonly Scope[], 'rpc'),
    logger: logger.module('gateway'),
  });

  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path === '/rpc') {
      void gateway.http(req, res);
      return;
    }
    if (path === '/api/chat/stream') {
      chatStream(req, res);
      return;
    }
    if (path === '/health' && req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      return;
    }
    if (path !== undefined && hooks.matches(path)) {
      void hooks.handle(req, res);
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
  });
  server.on('upgrade', (req, socket, head) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path !== '/ws') {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
      return;
    }
    gateway.ws.handleUpgrade(req, socket, head);
  });

  // Everything opened above, closed in dependency order (by stop, and by a start that cannot listen).
  const closeServices = async (): Promise<void> => {
    await graph.close();
    await browser.shutdown();
    await hooks.close();
    await agentRuntime.close();
    await cacheTrace?.close();
    await memory?.close();
    await heartbeat.close();
    await cron.close();
    await posture.idle();
    await obsEvidence.close();
    await db.close();
    await configAudit.close();
  };

  let host = options.host ?? config.gateway.host;
  let port = options.port ?? config.gateway.port;
  try {
    port = await listen(server, host, port);
  } catch (error) {
    // An embedder (or test) that catches this must not be left with open files, timers and the database.
    log.error(
      {
        err: error,
        hint: 'another process may hold the address; choose gateway.host/gateway.port or --port',
        errorKind: 'resource',
      },
      'cannot listen',
    );
    await gateway.ws.close();
    await closeServices();
    await logger.close();
    throw error;
  }
  // After listen: a start that cannot bind must not mint (and print) a token it never serves.
  await runAsActor({ method: 'bootstrap' }, () =>
    ensureBootstrapToken({ store: tokens, env, print, logger: logger.module('auth') }),
  );
  // Not awaited: asking local model servers must not hold up the start.
  void posture.check(config.providers);
  const pidFile = join(dataDir, 'agentd.pid');
  writeFileSync(pidFile, `${process.pid}\n`);

  log.info(
    { startupDurationMs: now() - startedAt, instanceId: randomUUID(), configName: configStore.filePath },
    `agentd listening on http://${host}:${port}`,
  );

  const reload = async (): Promise<void> => {
    // A changed file reaches the services through the change listener above.
    await configAudit.reload(() => configStore.load());
    log.info({ step: 'reload' }, 'config reloaded from disk');
  };

  const restart = (): Promise<void> => {
    if (restarting) return restarting;
    restarting = (async () => {
      const began = now();
      log.info({ step: 'restart' }, 'gateway restarting');
      await reload();
      await gateway.replace();
      const wantHost = options.host ?? config.gateway.host;
      const wantPort = options.port ?? config.gateway.port;
      if (wantHost !== host || (wantPort !== port && wantPort !== 0)) {
        await closeServer(server);
        host = wantHost;
        port = await listen(server, host, wantPort);
      }
      log.info({ step: 'restart', durationMs: now() - began }, 'gateway restarted');
    })().finally(() => {
      restarting = undefined;
    });
    return restarting;
  };

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    if (stopping) return stopping;
    stopping = (async () => {
      const began = now();
      log.info({ shutdownOrder: 1, step: 'shutdown' }, 'shutting down');
      await restarting?.catch(() => undefined);
      const closing = closeServer(server);
      await gateway.ws.close();
      await closing;
      await closeServices();
      rmSync(pidFile, { force: true });
      log.info({ shutdownDurationMs: now() - began }, 'shutdown complete');
      await logger.close();
    })();
    return stopping;
  };

  return {
    get host() {
      return host;
    },
    get port() {
      return port;
    },
    get url() {
      return `http://${formatHost(host)}:${port}`;
    },
    get wsUrl() {
      return `ws://${formatHost(host)}:${port}/ws`;
    },
    dataDir,
    logger,
    memory,
    heartbeat,
    notify: (clientId, method, params) => {
      if (clientId === undefined) gateway.ws.broadcast(method, params);
      else gateway.ws.notify(clientId, method, params);
    },
    reload,
    restart,
    stop,
  };
}

const capabilityClasses = new Set<string>(['frontier', 'mid', 'small', 'nano']);

/** The capability class of an agent's model (or else its provider's), `unknown` when none is set. */
function capabilityClassOf(
  runtime: AgentRuntime,
  agentId: string,
): 'frontier' | 'mid' | 'small' | 'nano' | 'unknown' {
  let agent: { provider: string; model?: string | undefined };
  try {
    agent = runtime.agents.get(agentId);
  } catch {
    return 'unknown';
  }
  const { providers, models } = runtime.models();
  const provider = providers.find((entry) => entry.id === agent.provider);
  const model = models.find(
    (entry) =>
      entry.provider === agent.provider && entry.model === (agent.model ?? provider?.models[0]?.model),
  );
  const found = model?.capabilityClass ?? provider?.capabilityClass;
  return found !== undefined && capabilityClasses.has(found)
    ? (found as 'frontier' | 'mid' | 'small' | 'nano')
    : 'unknown';
}

/** A config-store logger that drops lines until the real one is attached. */
function forwardingLogger(): ConfigStoreLogger & { attach(target: ConfigStoreLogger): void } {
  let target: ConfigStoreLogger | undefined;
  return {
    debug: (fields, message) => target?.debug(fields, message),
    info: (fields, message) => target?.info(fields, message),
    warn: (fields, message) => target?.warn(fields, message),
    error: (fields, message) => target?.error(fields, message),
    attach: (next) => {
      target = next;
    },
  };
}

function readConfig(store: ConfigStore<DaemonConfig>): DaemonConfig {
  return store.current();
}

/** A relative `daemon.logging.filePath` is relative to the data dir, not to the cwd. */
function withAbsoluteLogPath(dataDir: string, section: DaemonConfig['daemon']): DaemonConfig['daemon'] {
  const filePath = section.logging.filePath;
  if (!filePath || isAbsolute(filePath)) return section;
  return { ...section, logging: { ...section.logging, filePath: join(dataDir, filePath) } };
}

function formatHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const onError = (error: Error) => reject(error);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolvePort((server.address() as AddressInfo).port);
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((done) => {
    if (!server.listening) {
      done();
      return;
    }
    server.close(() => done());
    // Keep-alive HTTP sockets would hold close() open; idle ones can go now.
    server.closeIdleConnections();
  });
}
