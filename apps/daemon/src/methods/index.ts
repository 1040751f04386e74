import type { ConfigStore } from '@agentd/config-store';
import type { RootLogger } from '@agentd/logging';
import type { AnyMethod } from '@agentd/rpc-core';
import type { DaemonConfig } from '../config-schema.js';
import type { DaemonServices } from '../services.js';
import { adminReachGuard, plaintextTokenGuard } from '../token-policy.js';
import { tenantGuard, unboundOnly } from './tenancy.js';
import { agentMethods } from './agent.js';
import { agentsMethods } from './agents.js';
import { browserMethods } from './browser.js';
import { channelsMethods } from './channels.js';
import { configMethods } from './config.js';
import { cronMethods } from './cron.js';
import { daemonMethods } from './daemon.js';
import { type GatewayControl, gatewayMethods } from './gateway.js';
import { graphMethods } from './graph.js';
import { heartbeatMethods } from './heartbeat.js';
import { memoryMethods } from './memory.js';
import { modelsMethods } from './models.js';
import { obsMethods } from './obs.js';
import { obsBillingMethods } from './obs-billing.js';
import { schedulerMethods } from './scheduler.js';
import { sessionMethods } from './session.js';
import { systemMethods } from './system.js';
import { tokenMethods } from './tokens.js';

/** Every built-in JSON-RPC method of the daemon (`rpc.discover` is added by the caller). */
export function builtInMethods(deps: {
  services: DaemonServices;
  control: GatewayControl;
  configStore: ConfigStore<DaemonConfig>;
  /** The config at start (graph limits are read once). */
  config: DaemonConfig;
  logger: RootLogger;
  now: () => number;
}): AnyMethod[] {
  const { services, configStore, config, now } = deps;
  const { securityAudit: audit, agentRuntime: runtime, heartbeat } = services;
  const tenants = tenantGuard(audit);
  const plaintext = plaintextTokenGuard(() => configStore.current().gateway.tokens);
  const adminReach = adminReachGuard();
  const checkConfigWrite = (candidate: Record<string, unknown>, mode: 'merge' | 'replace' | 'restore') => {
    // A restored commit's tokens were written before; only the admin reach is judged for it.
    if (mode !== 'restore') plaintext(candidate);
    adminReach(candidate, mode === 'restore' ? 'replace' : mode);
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
    // Graph runs and the browser are shared by every tenant: bound tokens are refused there.
    ...unboundOnly(
      tenants,
      graphMethods({
        graph: services.graph,
        limits: config.graph,
        maxConcurrency: config.graph.maxConcurrency,
      }),
    ),
    ...unboundOnly(tenants, browserMethods({ browser: services.browser })),
    ...agentMethods({ runtime, tenants }),
    ...agentsMethods({ runtime }),
    ...modelsMethods({ runtime }),
    ...sessionMethods({ runtime, tenants }),
    ...obsBillingMethods({ runtime }),
    ...unboundOnly(
      tenants,
      obsMethods({
        service: services.obsService,
        evidence: services.obsEvidence,
        db: services.db,
        contextEngine: config.contextEngine,
        now,
        audit,
      }),
    ),
    ...memoryMethods({ store: () => services.memory.current?.store, tenants }),
    ...cronMethods({ cron: services.cron, tenants }),
    ...unboundOnly(tenants, schedulerMethods({ heartbeat })),
    ...unboundOnly(tenants, heartbeatMethods({ heartbeat })),
    // The chat platforms are shared by every tenant.
    ...unboundOnly(tenants, channelsMethods({ channels: services.channels })),
  ];
}
