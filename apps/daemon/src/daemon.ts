import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { hasScope, type Scope } from '@agentd/auth-scopes';
import { ensureBootstrapToken } from '@agentd/auth-scopes';
import { createChannelsHttpHandler } from '@agentd/channels';
import {
  type ConfigStore,
  type ConfigStoreLogger,
  createConfigStore,
  resolveSecretRefs,
} from '@agentd/config-store';
import type { AgentTurnRunner, EventSink, SpanSink } from '@agentd/contracts';
import type { NodeExecutor } from '@agentd/graph-engine';
import {
  type AgentdLogger,
  createLogger,
  resolveDaemonLogOptions,
  type RootLogger,
  sweepLogs,
} from '@agentd/logging';
import type { MemoryService } from '@agentd/memory-store';
import { type AgentdMetrics, createMetrics, parseListenAddress } from '@agentd/metrics';
import type { TelemetrySection } from '@agentd/telemetry';
import type { AgentdTracing } from '@agentd/telemetry/tracing';
import { type Identity, MethodRegistry, type MethodDefinition, rpcDiscoverMethod } from '@agentd/rpc-core';
import type { HeartbeatService } from '@agentd/cron-wakegate';
import type { HookResponseDeliverer, WakeTarget } from '@agentd/webhooks-hmac';
import { sweepEvidence } from '@agentd/evidence';
import { runAsActor } from '@agentd/evidence/audit';
import {
  acquireDataDirLock,
  type DataDirLock,
  type RepairPrivateModesResult,
  relayOverBus,
  repairPrivateModes,
  usePrivateUmask,
} from '@agentd/storage';
import { withHomes } from './host-affinity.js';
import { configSections, type DaemonConfig } from './config-schema.js';
import { createConsoleFiles, defaultConsoleDir } from './console-files.js';
import { gatewayMetricsHandler, listenForMetrics } from './metrics-http.js';
import { startMemoryGuard } from './memory-guard.js';
import { fullCollection } from './idle-heap.js';
import { consoleLoginHandler } from './console-login.js';
import { removeDaemonAddress, writeDaemonAddress } from './daemon-address.js';
import { createDaemonServer, gatewayBuilder, startGate } from './gateway.js';
import { createGatewayPool } from './gateway-pool.js';
import { createLifecycle, type Lifecycle } from './lifecycle.js';
import { createLiveConfig, registerDaemonAppliers, withAbsoluteLogPath } from './live-config.js';
import { builtInMethods } from './methods/index.js';
import { sectionsReferencing } from './secret-refs.js';
import { type DaemonServices, startServices } from './services.js';
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
  /** The built web console served at `/`. @default apps/console/dist beside the daemon */
  consoleDir?: string;
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
  /** The memory store, recall and agent tools; undefined while `memory.enabled` is false. */
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

/** The config store and the root logger, opened before any service. */
interface Foundation {
  configStore: ConfigStore<DaemonConfig>;
  logger: RootLogger;
  log: AgentdLogger;
  logDir: string;
}

/**
 * Loads the config, sweeps rotated logs and evidence files (before anything writes them)
 * and opens the root logger the config asks for.
 */
async function openFoundation(
  dataDir: string,
  now: () => number,
  options: DaemonOptions,
): Promise<Foundation> {
  // The config decides the log levels, so the config store's logger is attached once the logger exists.
  const configLog = forwardingLogger();
  const configStore: ConfigStore<DaemonConfig> = createConfigStore({
    dataDir,
    sections: configSections,
    logger: configLog,
  });
  await configStore.load();
  const config = readConfig(configStore);

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
  return { configStore, logger, log, logDir: logOptions.sweep.dir };
}

/** Starts the daemon: config, logging, storage, tokens, methods, HTTP + WebSocket server. */
export async function startDaemon(options: DaemonOptions = {}): Promise<RunningDaemon> {
  const now = options.now ?? Date.now;
  const startedAt = now();
  const env = options.env ?? process.env;
  const print = options.print ?? ((line: string) => console.log(line));
  const dataDir = resolve(options.dataDir ?? env.AGENTD_DATA_DIR ?? './data');
  // Everything created from here on (database, logs, evidence, git's objects) is owner-only.
  usePrivateUmask();
  mkdirSync(dataDir, { recursive: true });
  // Before anything in the data dir is written: a second daemon on it would lose the first's writes.
  const lock = acquireDataDirLock({ dataDir, now });
  let foundation: Foundation;
  let modes: RepairPrivateModesResult;
  try {
    modes = repairPrivateModes({ dataDir });
    foundation = await openFoundation(dataDir, now, options);
  } catch (error) {
    lock.release();
    throw error;
  }
  const { configStore, logger, log, logDir } = foundation;
  reportDataDir(log, lock, modes);
  // Every service below is added to this one list: started in order, stopped in reverse (by
  // stop, and by a start that fails part way, so an embedder that catches the error is not
  // left with open files, timers and the database).
  const lifecycle = createLifecycle({ logger: log });
  try {
    return await serve({
      options,
      now,
      startedAt,
      env,
      print,
      dataDir,
      configStore,
      logger,
      log,
      logDir,
      lifecycle,
      lock,
    });
  } catch (error) {
    await lifecycle.stop().catch(() => undefined);
    await logger.close();
    lock.release();
    throw error;
  }
}

/** Says in the log what the start found in the data directory: a stale lock, modes repaired. */
function reportDataDir(log: AgentdLogger, lock: DataDirLock, modes: RepairPrivateModesResult): void {
  if (lock.replaced) {
    log.warn(
      {
        pid: lock.replaced.pid,
        hint: 'the previous daemon on this data dir did not stop cleanly (killed or crashed)',
        errorKind: 'resource',
      },
      'took over a stale data directory lock',
    );
  }
  if (modes.repaired > 0) {
    log.warn(
      {
        count: modes.repaired,
        hint: 'files of the data directory were readable by other users; they are owner-only now',
        errorKind: 'config',
      },
      'data directory modes repaired',
    );
  }
  const [failure] = modes.failures;
  if (failure) {
    log.warn(
      {
        count: modes.failures.length,
        err: failure.error,
        path: failure.path,
        hint: 'make the data directory and its files owned by the user running agentd',
        errorKind: 'resource',
      },
      'data directory modes could not be repaired',
    );
  }
}

/** What {@link serve} runs on: the foundation plus the resolved start options. */
interface ServeContext extends Foundation {
  options: DaemonOptions;
  now: () => number;
  startedAt: number;
  env: NodeJS.ProcessEnv;
  print: (line: string) => void;
  dataDir: string;
  lifecycle: Lifecycle;
  /** Released last, when everything in the data dir is closed. */
  lock: DataDirLock;
}

/**
 * The daemon's stop, idempotent: lets a gateway restart in progress end, stops the lifecycle in
 * reverse, flushes the log and releases the data dir (even after a failed stop).
 */
function stopOnce(context: ServeContext, restarting: () => Promise<void> | undefined): () => Promise<void> {
  const { now, log, logger, lifecycle } = context;
  let stopping: Promise<void> | undefined;
  return () => {
    stopping ??= (async () => {
      try {
        const began = now();
        log.info({ shutdownOrder: 1, step: 'shutdown' }, 'shutting down');
        await restarting()?.catch(() => undefined);
        await lifecycle.stop();
        log.info({ shutdownDurationMs: now() - began }, 'shutdown complete');
        await logger.close();
      } finally {
        // Even after a failed stop: this process no longer serves the data dir.
        context.lock.release();
      }
    })();
    return stopping;
  };
}

/**
 * Starts the services, the methods and the gateway, then listens; every step joins the
 * lifecycle so `stop` (or the caller, when a step fails) closes them in reverse.
 */
async function serve(context: ServeContext): Promise<RunningDaemon> {
  const { options, now, env, dataDir, configStore, logger, log, logDir, lifecycle } = context;
  let config = readConfig(configStore);
  const metrics = config.metrics.enabled ? createMetrics() : undefined;
  // Spans go to the exporter made once the secrets its headers may name are open.
  let tracing: AgentdTracing | undefined;
  const spans: SpanSink | undefined = config.telemetry.otlp.endpoint
    ? (span) => tracing?.span(span)
    : undefined;
  const services: DaemonServices = await startServices(
    { options, config, configStore, dataDir, logDir, env, now, logger, log, metrics, spans },
    lifecycle,
  );
  tracing = await startTracing(config.telemetry, services.lookupSecret, lifecycle);
  const memoryGuard = startMemoryGuard({
    highWaterMb: config.gateway.memoryHighWaterMb,
    // Where node was started with --expose-gc, a full collection gives back what can be.
    dropCaches: () => fullCollection()?.(),
    onChange: (shedding, rssMb) => {
      metrics?.memoryPressure(shedding);
      const fields = { rssMb, highWaterMb: config.gateway.memoryHighWaterMb };
      if (shedding) {
        log.warn(
          {
            ...fields,
            errorKind: 'resource',
            hint: 'new agent turns are refused (OVERLOADED) and rate limits halved until memory falls below 90 % of gateway.memoryHighWaterMb; give the service more memory or lower the load',
          },
          'memory above the high-water mark: shedding load',
        );
      } else log.info(fields, 'memory below the high-water mark again: turns admitted');
    },
  });
  lifecycle.add('memory guard', () => memoryGuard.stop());
  const { tokens, heartbeat, agentRuntime, posture, hooks, configAudit, resolveTokens } = services;

  let restarting: Promise<void> | undefined;
  const control = {
    startedAt: context.startedAt,
    configPaths: () => [configStore.filePath],
    sections: () => configStore.sections,
    mcpServers: () => services.mcpTools.status(),
    cluster: async () => {
      const { coordinator } = services;
      const members = await coordinator.instances();
      return {
        mode: coordinator.mode,
        instanceId: coordinator.instanceId,
        instances: members.map(({ instanceId, advertiseUrl, startedAt, heartbeatAt }) => ({
          instanceId,
          advertiseUrl,
          startedAt,
          heartbeatAt,
        })),
      };
    },
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

  // env.set: the sections that reference the secret go through the live-config path again, so
  // the new value is resolved in process (no restart); liveConfig is created below, before any call.
  const reresolveSecret = (name: string): Promise<boolean> => {
    const current = configStore.current();
    return liveConfig.apply(current, sectionsReferencing(current, name)).then(
      () => true,
      () => false,
    );
  };

  const registry = new MethodRegistry();
  // Turns and workspaces of agents homed on another instance answer -32010 (cluster mode).
  const methods = withHomes(
    builtInMethods({ services, control, configStore, config, logger, now, reresolveSecret }),
    services.affinity,
    agentRuntime,
  );
  for (const method of [...methods, ...(options.methods ?? [])]) {
    registry.register(method);
  }
  registry.register(rpcDiscoverMethod(registry, { title: 'agentd', version: VERSION }));

  // One dispatcher per gateway: /ws, /rpc and /api/chat/stream authenticate, check scopes
  // (denials are audit events) and map errors the same way.
  const buildGateway = gatewayBuilder({
    registry,
    tokens,
    runtime: agentRuntime,
    audit: services.securityAudit,
    logger,
    memoryStore: () => services.memory.current?.store,
    metrics,
    tracing: () => tracing,
    admitTurn: () => memoryGuard.admitTurn(),
    limitShare: () => memoryGuard.limitShare(),
  });
  // Changed limits build a new generation for new connections; open sockets keep theirs.
  const gateway = createGatewayPool(() => buildGateway(config));
  lifecycle.add('gateway', () => gateway.ws.close());
  // Server pushes for one client (or all) reach its sockets on every instance.
  const pushes = relayOverBus<WsPush>(
    services.coordinator,
    'ws-push',
    ({ clientId, method, params }) =>
      clientId === undefined
        ? gateway.ws.broadcast(method, params)
        : gateway.ws.notify(clientId, method, params),
    log,
  );
  lifecycle.add('ws-push', () => pushes.close());
  const push = (clientId: string | undefined, method: string, params: unknown): void =>
    void pushes.send({ ...(clientId === undefined ? {} : { clientId }), method, params });
  // webchat's chats are the WebSocket clients: a delivery is a notification to every socket of one.
  services.channels.attachWebchat((clientId, method, params) => gateway.ws.notify(clientId, method, params));
  tokens.onRevoke((tokenId) => {
    gateway.ws.closeWhere((identity) => identity.tokenId === tokenId, 4001, 'Token revoked');
  });
  // approval.requested / approval.resolved reach the admin WebSocket clients only.
  services.approvals.onEvent((event) => {
    const params = event.type === 'requested' ? event.request : event.resolution;
    gateway.ws.notifyWhere(isOperator, `approval.${event.type}`, params);
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
    browser: services.browser,
    media: services.media,
    mediaMainProvider: services.mediaMainProvider,
    lookupSecret: services.lookupSecret,
    workspace: services.workspace,
    terminal: services.terminal,
    graph: services.graph,
    cron: services.cron,
    memory: services.memory,
    approvals: services.approvals,
    orchestrate: services.orchestrate,
    mcpTools: services.mcpTools,
    skills: services.skills,
    recordPosture: services.recordPosture,
    learning: services.learning,
    ensureLifecycleJob: services.ensureLifecycleJob,
    dropLifecycleJob: services.dropLifecycleJob,
    channels: services.channels,
    dataDir,
    configAudit,
    cacheTrace: services.cacheTrace,
    renewGateway: () => gateway.renew(),
    checkPosture: (providers) => void posture.check(providers),
    webhooks: hooks,
  });
  liveConfig.on(['autonomy', 'security'], (next) =>
    services.autonomy.applyConfig({ autonomy: next.autonomy, security: next.security }),
  );
  // Sub-agent completions go to the client that started the run tree, on whichever instance
  // its sockets are (cluster mode: over the bus, each instance delivering to its own).
  services.autonomy.setNotifier(push);
  configStore.onChange((cfg, change) => {
    config = cfg;
    return liveConfig.apply(cfg, change.changedSections);
  });

  // Opened once the admin token and every service are ready (see createDaemonServer).
  const readiness = startGate();
  const consoleFiles = createConsoleFiles(options.consoleDir ?? defaultConsoleDir());
  const consoleLogin = consoleLoginHandler({ dataDir, tokens, audit: services.securityAudit, now });
  const server = createDaemonServer({
    gateway,
    hooks,
    readiness,
    channels: createChannelsHttpHandler({ service: services.channels }),
    console: consoleFiles,
    consoleLogin,
    ...(metrics ? { metrics: metricsRoute(metrics, services) } : {}),
  });
  if (metrics) {
    metrics.useSources({
      webSocketConnections: () => gateway.ws.connectionCount,
      deliveryQueue: async () => {
        const { sent: _done, ...pending } = await services.channels.queueStatus();
        return pending;
      },
    });
    const listen = config.metrics.listen;
    if (listen) {
      const { host: metricsHost, port: metricsPort } = parseListenAddress(listen);
      await lifecycle.start(
        'metrics listener',
        () => listenForMetrics(metrics, metricsHost, metricsPort),
        (metricsServer) => closeServer(metricsServer),
      );
    }
  }

  let host = options.host ?? config.gateway.host;
  let port = options.port ?? config.gateway.port;
  port = await lifecycle.start(
    'listener',
    () =>
      listen(server, host, port).catch((error: unknown) => {
        log.error(
          {
            err: error,
            hint: 'another process may hold the address; choose gateway.host/gateway.port or --port',
            errorKind: 'resource',
          },
          'cannot listen',
        );
        throw error;
      }),
    // In-flight requests finish while the sockets are closed with 1001; requests still waiting
    // for a start that failed are dropped.
    () => {
      readiness.fail();
      return Promise.all([closeServer(server), gateway.ws.close()]);
    },
  );
  // Stopped before the listener closes: turns waiting for an approval end (their requests stay
  // pending and are denied with reason `restart` at the next start) instead of holding the stop.
  lifecycle.add('approval waits', () => services.approvals.close());
  // After listen: a start that cannot bind must not mint (and print) a token it never serves.
  await runAsActor({ method: 'bootstrap' }, () =>
    ensureBootstrapToken({ store: tokens, env, print: context.print, logger: logger.module('auth') }),
  );
  // Not awaited: asking local model servers must not hold up the start.
  void posture.check(config.providers);
  const pidFile = join(dataDir, 'agentd.pid');
  await lifecycle.start(
    'pid file',
    () => writeFileSync(pidFile, `${process.pid}\n`),
    () => rmSync(pidFile, { force: true }),
  );
  // `agentd console` reads where this daemon really listens (port 0, --port, a changed config).
  await lifecycle.start(
    'address file',
    () => writeDaemonAddress(dataDir, { host, port }),
    () => removeDaemonAddress(dataDir),
  );

  // Port 0 is known only now: peers and gateway.status see the URL this instance listens on.
  await services.coordinator.advertise(config.cluster.advertiseUrl ?? `http://${formatHost(host)}:${port}`);
  readiness.open();
  log.info(
    {
      startupDurationMs: now() - context.startedAt,
      instanceId: services.coordinator.instanceId,
      configName: configStore.filePath,
    },
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
        writeDaemonAddress(dataDir, { host, port });
      }
      log.info({ step: 'restart', durationMs: now() - began }, 'gateway restarted');
    })().finally(() => {
      restarting = undefined;
    });
    return restarting;
  };

  const stop = stopOnce(context, () => restarting);

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
    get memory() {
      return services.memory.current;
    },
    heartbeat,
    notify: push,
    reload,
    restart,
    stop,
  };
}

/** A JSON-RPC notification for one client's sockets, or every socket without `clientId`. */
interface WsPush {
  clientId?: string;
  method: string;
  params: unknown;
}

/** An unbound admin caller: approval notifications name sessions of every tenant. */
function isOperator(identity: Identity): boolean {
  return identity.tenant === undefined && hasScope(identity.scopes as readonly Scope[], 'admin');
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

/**
 * The OTLP exporter when `telemetry.otlp.endpoint` is set: `@agentd/telemetry` and the
 * OpenTelemetry packages are imported only then. Stopped (and flushed) with the daemon.
 */
async function startTracing(
  section: TelemetrySection,
  lookupSecret: (name: string) => Promise<string | undefined>,
  lifecycle: Lifecycle,
): Promise<AgentdTracing | undefined> {
  const { endpoint, headers, serviceName } = section.otlp;
  if (!endpoint) return undefined;
  const resolved = await resolveSecretRefs(headers, lookupSecret);
  const { createTracing } = await import('@agentd/telemetry/tracing');
  return lifecycle.start(
    'telemetry',
    async () => createTracing({ endpoint, headers: resolved, serviceName, serviceVersion: VERSION }),
    (tracing) => tracing.shutdown(),
  );
}

/** `GET /metrics` on the gateway: an admin token; refusals are audit events like `/rpc`'s. */
function metricsRoute(metrics: AgentdMetrics, services: DaemonServices) {
  return gatewayMetricsHandler({
    metrics,
    authenticate: (presented) => services.tokens.authenticate(presented),
    onDenied: (reason, identity) =>
      services.securityAudit.emit(
        reason === 'scope'
          ? {
              kind: 'scope',
              classification: 'denied',
              outcome: 'failure',
              severity: 'medium',
              caller: identity?.tokenId,
              requiredScope: 'admin',
            }
          : {
              kind: 'auth',
              classification: 'denied',
              outcome: 'failure',
              severity: reason === 'invalid_token' ? 'medium' : 'low',
              transport: 'http',
              reason,
            },
      ),
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
