import type { AgentRuntime } from '@agentd/agent-runtime';
import type { TokenConfig, TokenStore } from '@agentd/auth-scopes';
import type { BrowserService } from '@agentd/browser';
import type { WorkspaceService } from '@agentd/workspace';
import type { TerminalService } from '@agentd/terminal';
import type { ChannelsService } from '@agentd/channels';
import type { CronService, HeartbeatService } from '@agentd/cron-wakegate';
import type { GraphService } from '@agentd/graph-engine';
import type { MediaService } from '@agentd/media';
import { resolveSecretRefs } from '@agentd/config-store';
import { dirname, isAbsolute, join } from 'node:path';
import type { CacheTraceStream } from '@agentd/evidence';
import type { ConfigAudit } from '@agentd/evidence/audit';
import { type AgentdLogger, resolveDaemonLogOptions, type RootLogger } from '@agentd/logging';
import type { DaemonConfig } from './config-schema.js';
import { resolveChannelSecrets } from './channel-services.js';
import type { MemorySwitch } from '@agentd/memory-store';
import type { McpToolHost } from '@agentd/mcp';

/** Applies one section of a committed config to the service that owns it. */
export type SectionApplier = (next: DaemonConfig, previous: DaemonConfig) => void | Promise<void>;

/** The single path every committed config change takes (config.* writes, agents.*, SIGHUP, gateway.restart). */
export interface LiveConfig {
  /** Registers the applier of a section; one applier may serve several sections (it runs once per change). */
  on(sections: ReadonlyArray<keyof DaemonConfig>, apply: SectionApplier): void;
  /**
   * Hands every changed section to its applier, in registration order. A failing applier does
   * not stop the others; the failures are logged per section and rethrown together, so the
   * config write answers `applied: false`.
   */
  apply(next: DaemonConfig, changedSections: readonly string[]): Promise<void>;
}

/** Creates the registry; `initial` is the config the services were started with. */
export function createLiveConfig(options: { initial: DaemonConfig; logger: AgentdLogger }): LiveConfig {
  const appliers: Array<{ sections: ReadonlyArray<string>; apply: SectionApplier }> = [];
  let previous = options.initial;
  return {
    on(sections, apply) {
      appliers.push({ sections, apply });
    },
    async apply(next, changedSections) {
      const before = previous;
      previous = next;
      const failures: unknown[] = [];
      for (const { sections, apply } of appliers) {
        const changed = sections.filter((section) => changedSections.includes(section));
        if (changed.length === 0) continue;
        try {
          await apply(next, before);
        } catch (error) {
          failures.push(error);
          options.logger.error(
            {
              err: error,
              sections: changed,
              errorKind: 'config',
              hint: 'the change is committed; fix the section and write it again, or restart the daemon',
            },
            `config change not applied to ${changed.join(', ')}`,
          );
        }
      }
      if (failures.length === 1) throw failures[0];
      if (failures.length > 1)
        throw new AggregateError(failures, 'config change not applied to every section');
    },
  };
}

/** The running services whose sections apply in place. */
export interface LiveServices {
  logger: RootLogger;
  log: AgentdLogger;
  env: NodeJS.ProcessEnv;
  tokens: TokenStore;
  resolveTokens: (list: TokenConfig[]) => Promise<TokenConfig[]>;
  /** New WebSocket connections and HTTP requests get a gateway built from the current config. */
  renewGateway: () => void;
  heartbeat: HeartbeatService;
  agentRuntime: AgentRuntime;
  checkPosture: (providers: DaemonConfig['providers']) => void;
  webhooks: { configure(section: DaemonConfig['webhooks']): Promise<void> };
  browser: BrowserService;
  media: MediaService;
  mediaMainProvider: { refresh(): Promise<void> };
  /** Resolves a `${secret:NAME}` name (the secrets store, `.env`, the environment). */
  lookupSecret: (name: string) => Promise<string | undefined>;
  workspace: WorkspaceService;
  terminal: TerminalService;
  graph: GraphService;
  cron: CronService;
  memory: MemorySwitch;
  approvals: { applyConfig(section: DaemonConfig['approvals']): void };
  orchestrate: { applyConfig(section: DaemonConfig['orchestrate']): void };
  mcpTools: McpToolHost;
  skills: { applyConfig(section: DaemonConfig['skills']): void; removeBlocked(): Promise<string[]> };
  learning: { applyConfig(section: DaemonConfig['learning']): void };
  /** Creates or reschedules the `Memory lifecycle` cron job. */
  ensureLifecycleJob(intervalMs: number): Promise<void>;
  /** Removes the `Memory lifecycle` cron job. */
  dropLifecycleJob(): Promise<void>;
  /** Records the standing posture row again (the imported-skills count follows `skills`). */
  recordPosture(): Promise<void>;
  channels: ChannelsService;
  dataDir: string;
  configAudit: ConfigAudit;
  cacheTrace: CacheTraceStream | undefined;
}

/** A relative `daemon.logging.filePath` is relative to the data dir, not to the cwd. */
export function withAbsoluteLogPath(
  dataDir: string,
  section: DaemonConfig['daemon'],
): DaemonConfig['daemon'] {
  const filePath = section.logging.filePath;
  if (!filePath || isAbsolute(filePath)) return section;
  return { ...section, logging: { ...section.logging, filePath: join(dataDir, filePath) } };
}

/**
 * `daemon.logging` and `observability.logRotation` applied to the open files: the daemon log
 * (path, roll size, copies, gzip), the config audit and the cache trace (which live in the
 * log's directory) and the agent runtime's evidence files. The age sweep runs at start only.
 */
function applyLogFiles(services: LiveServices, next: DaemonConfig): void {
  const rotation = next.observability.logRotation;
  const { file } = resolveDaemonLogOptions({
    dataDir: services.dataDir,
    daemon: withAbsoluteLogPath(services.dataDir, next.daemon),
    logRotation: rotation,
  });
  const logDir = dirname(file.filePath);
  services.logger.file?.applyOptions(file);
  services.configAudit.applyOptions({ logDir, maxFiles: rotation.maxFiles, compress: rotation.compressAged });
  services.cacheTrace?.applyOptions({
    dataDir: services.dataDir,
    logDir,
    tracing: next.daemon.logging.tracing,
    logRotation: rotation,
  });
  services.agentRuntime.applyConfig({ evidenceRotation: rotation });
}

/** Gateway keys the dispatcher and transports are built with; a change builds them anew for new connections. */
const gatewayLimitKeys = [
  'maxBatchSize',
  'wsMaxMessageBytes',
  'wsMessageRateLimit',
  'wsHeartbeatMs',
] as const;

/**
 * Registers the daemon's appliers: each section goes to the service that owns it. What is
 * left out is restart-required in `configSections` (the listening address, which
 * `gateway.restart` re-binds, and storage).
 */
export function registerDaemonAppliers(live: LiveConfig, services: LiveServices): void {
  const { log } = services;
  live.on(['daemon'], (next) => services.logger.resetLevels(next.daemon.logLevels));
  live.on(['daemon', 'observability'], (next) => applyLogFiles(services, next));
  live.on(['gateway'], async (next, previous) => {
    if (
      gatewayLimitKeys.some(
        (key) => JSON.stringify(next.gateway[key]) !== JSON.stringify(previous.gateway[key]),
      )
    ) {
      services.renewGateway();
      log.info({ step: 'config' }, 'gateway limits applied to new connections');
    }
    // An unresolvable token reference is logged and the previous tokens stay.
    await services.resolveTokens(next.gateway.tokens).then(
      (resolved) => services.tokens.replace(resolved),
      (err: unknown) =>
        log.error(
          {
            err,
            hint: 'set the environment variable the token reference names, then send SIGHUP',
            errorKind: 'config',
          },
          'gateway tokens not applied',
        ),
    );
  });
  // The `/v1` handler is part of a gateway generation: a new one serves the next request.
  live.on(['openaiApi'], () => services.renewGateway());
  live.on(['mcp'], (next, previous) => {
    if (JSON.stringify(next.mcp.serve) !== JSON.stringify(previous.mcp.serve)) services.renewGateway();
    // Changed and removed servers stop (their tools withdrawn); new ones start.
    return services.mcpTools.apply(next.mcp.servers);
  });
  live.on(['heartbeat'], (next) => services.heartbeat.configure(next.heartbeat));
  live.on(['agents', 'providers', 'contextEngine'], (next) =>
    services.agentRuntime.applyConfig({
      agents: next.agents,
      providers: next.providers,
      contextEngine: next.contextEngine,
    }),
  );
  live.on(['providers'], (next) => services.checkPosture(next.providers));
  live.on(['providers'], () => services.mediaMainProvider.refresh());
  live.on(['webhooks'], (next) => services.webhooks.configure(next.webhooks));
  live.on(['workspace'], (next) => {
    services.workspace.applyConfig(next.workspace);
  });
  live.on(['terminal'], (next) => {
    services.terminal.applyConfig(next.terminal);
  });
  live.on(['browser'], async (next) => {
    const { relaunched } = await services.browser.applyConfig(next.browser);
    if (relaunched)
      log.info({ step: 'config' }, 'browser stopped; the next call launches it with the new section');
  });
  live.on(['graph'], (next) => services.graph.applyConfig(next.graph));
  // Provider keys may be ${secret:NAME}: resolved here, so the service only sees values.
  live.on(['media'], async (next) =>
    services.media.applyConfig(await resolveSecretRefs(next.media, services.lookupSecret)),
  );
  live.on(['cron'], (next) =>
    services.cron.applyConfig({
      ...next.cron,
      wakeGate: { ...next.cron.wakeGate, path: next.cron.wakeGate.path ?? services.env.PATH },
    }),
  );
  // On opens the store the first time (then re-configures it); off withdraws it from the
  // memory methods, recall and the agent tools until it is on again.
  live.on(['memory'], (next) => services.memory.apply(next.memory));
  live.on(['approvals'], (next) => services.approvals.applyConfig(next.approvals));
  live.on(['orchestrate'], (next) => services.orchestrate.applyConfig(next.orchestrate));
  live.on(['learning'], async (next) => {
    services.learning.applyConfig(next.learning);
    if (next.learning.enabled) await services.ensureLifecycleJob(next.learning.sweepIntervalMs);
    // Off: no job left to fail every interval.
    else await services.dropLifecycleJob();
  });
  live.on(['skills'], async (next) => {
    services.skills.applyConfig(next.skills);
    // A name newly in skills.import.blocked (`agentd skills remove`) takes its import away now.
    await services.skills.removeBlocked();
    await services.recordPosture();
  });
  // A changed platform section restarts that adapter with the newly resolved credentials.
  live.on(['channels', 'notifications'], async (next) =>
    services.channels.apply(
      await resolveChannelSecrets(next.channels, services.lookupSecret, log),
      next.notifications,
    ),
  );
}
