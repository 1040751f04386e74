import type { ConfigStore } from '@agentd/config-store';
import type { RootLogger } from '@agentd/logging';
import type { AnyMethod } from '@agentd/rpc-core';
import type { DaemonConfig } from '../config-schema.js';
import type { DaemonServices } from '../services.js';
import { unknownSecretRefGuard } from '../secret-refs.js';
import { adminReachGuard, plaintextTokenGuard } from '../token-policy.js';
import { tenantGuard, unboundOnly } from './tenancy.js';
import { agentMethods } from './agent.js';
import { agentsMethods } from './agents.js';
import { approvalMethods } from './approvals.js';
import { autonomyMethods } from './autonomy.js';
import { browserMethods } from './browser.js';
import { channelsMethods } from './channels.js';
import { configMethods } from './config.js';
import { contextMethods } from './context.js';
import { cronMethods } from './cron.js';
import { daemonMethods } from './daemon.js';
import { envMethods } from './env.js';
import { type GatewayControl, gatewayMethods } from './gateway.js';
import { graphMethods } from './graph.js';
import { heartbeatMethods } from './heartbeat.js';
import { mediaMethods } from './media.js';
import { learningMethods } from './learning.js';
import { memoryMethods } from './memory.js';
import { modelsMethods } from './models.js';
import { obsMethods } from './obs.js';
import { obsBillingMethods } from './obs-billing.js';
import { schedulerMethods } from './scheduler.js';
import { sessionMethods } from './session.js';
import { skillsMethods } from './skills.js';
import { systemMethods } from './system.js';
import { tokenMethods } from './tokens.js';
import { workspaceMethods } from './workspace.js';

/** Every built-in JSON-RPC method of the daemon (`rpc.discover` is added by the caller). */
export function builtInMethods(deps: {
  services: DaemonServices;
  control: GatewayControl;
  configStore: ConfigStore<DaemonConfig>;
  /** The config at start (graph limits are read once). */
  config: DaemonConfig;
  logger: RootLogger;
  now: () => number;
  /** Applies the config sections that reference the secret `name` again (after `env.set`). */
  reresolveSecret: (name: string) => Promise<boolean>;
}): AnyMethod[] {
  const { services, configStore, config, now } = deps;
  const { securityAudit: audit, agentRuntime: runtime, heartbeat } = services;
  const tenants = tenantGuard(audit);
  const plaintext = plaintextTokenGuard(() => configStore.current().gateway.tokens);
  const adminReach = adminReachGuard();
  const knownSecrets = unknownSecretRefGuard(services.secrets);
  const checkConfigWrite = async (
    candidate: Record<string, unknown>,
    mode: 'merge' | 'replace' | 'restore',
  ) => {
    // A restored commit's tokens were written before; only the admin reach is judged for it.
    if (mode !== 'restore') plaintext(candidate);
    adminReach(candidate, mode === 'restore' ? 'replace' : mode);
    await knownSecrets(candidate);
  };
  return [
    ...systemMethods({ now }),
    ...gatewayMethods({ control: deps.control, now, audit }),
    ...daemonMethods({ logger: deps.logger, audit }),
    ...configMethods({
      store: configStore,
      checkWrite: checkConfigWrite,
      audit: services.configAudit,
    }),
    ...tokenMethods({ tokens: services.tokens, audit }),
    ...unboundOnly(
      tenants,
      envMethods({ secrets: services.secrets, reresolve: deps.reresolveSecret, audit, now }),
    ),
    // A bound token's graphs, saved graphs and runs are its tenant's; the browser is shared by
    // every tenant, so bound tokens are refused there.
    ...graphMethods({
      graph: services.graph,
      limits: config.graph,
      maxConcurrency: config.graph.maxConcurrency,
      tenants,
    }),
    ...unboundOnly(tenants, browserMethods({ browser: services.browser })),
    // Media writes into and reads from agent workspaces and fetches links: unbound tokens only.
    ...unboundOnly(tenants, mediaMethods({ media: services.media })),
    ...agentMethods({ runtime, tenants }),
    ...agentsMethods({ runtime }),
    ...modelsMethods({ runtime }),
    ...sessionMethods({ runtime, tenants }),
    ...contextMethods({ runtime, tenants }),
    ...obsBillingMethods({ runtime }),
    ...unboundOnly(
      tenants,
      obsMethods({
        service: services.obsService,
        evidence: services.obsEvidence,
        db: services.db,
        contextEngine: () => configStore.current().contextEngine,
        agentContext: (agentId) => {
          if (!runtime.agents.list().includes(agentId)) return undefined;
          const agent = runtime.agents.get(agentId);
          return { contextBudget: agent.contextBudget, compactionModel: agent.operations.compaction ?? null };
        },
        now,
        audit,
      }),
    ),
    ...memoryMethods({ store: () => services.memory.current?.store, tenants }),
    ...cronMethods({ cron: services.cron, tenants }),
    ...unboundOnly(tenants, schedulerMethods({ heartbeat })),
    ...unboundOnly(tenants, heartbeatMethods({ heartbeat })),
    // Pending requests name sessions of every tenant: bound tokens are refused.
    ...unboundOnly(tenants, approvalMethods({ approvals: services.approvals })),
    // An agent's workspace serves every tenant that talks to the agent: bound tokens are refused.
    ...unboundOnly(
      tenants,
      workspaceMethods({
        workspace: services.workspace,
        agentExists: (agentId) => runtime.agents.list().includes(agentId),
      }),
    ),
    ...autonomyMethods({ autonomy: services.autonomy, tenants }),
    ...skillsMethods({ skills: services.skills }),
    ...learningMethods({ learning: services.learning }),
    // The chat platforms are shared by every tenant.
    ...unboundOnly(tenants, channelsMethods({ channels: services.channels })),
  ];
}
