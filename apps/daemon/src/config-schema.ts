import {
  agentsSectionSchema,
  contextEngineSectionSchema,
  providersSectionSchema,
} from '@agentd/agent-runtime';
import { gatewayTokensSchema } from '@agentd/auth-scopes';
import { graphSectionSchema } from '@agentd/graph-engine';
import { browserSectionSchema } from '@agentd/browser';
import { cronSectionSchema, heartbeatSectionSchema } from '@agentd/cron-wakegate';
import { daemonLoggingSchema, logRotationSchema } from '@agentd/logging';
import { memorySectionSchema } from '@agentd/memory-store';
import { gatewayTransportSchema } from '@agentd/rpc-core';
import { storageSectionSchema } from '@agentd/storage';
import { webhooksSectionSchema } from '@agentd/webhooks-hmac';
import { z } from 'zod';

import { DEFAULT_HOST, DEFAULT_PORT } from './defaults.js';

export { DEFAULT_HOST, DEFAULT_PORT };

/**
 * The `gateway` section: the rpc-core transport limits, where to listen and the tokens.
 * Limits and heartbeat apply to new connections at once; host and port need a restart
 * (`gateway.restart` re-binds in process).
 */
export const gatewaySectionSchema = gatewayTransportSchema.extend({
  host: z.string().min(1).default(DEFAULT_HOST),
  port: z.number().int().min(0).max(65535).default(DEFAULT_PORT),
  tokens: gatewayTokensSchema.default([]),
});

/** The `observability` section; later packages add their keys beside `logRotation`. */
export const observabilitySectionSchema = z.object({
  logRotation: logRotationSchema.default(logRotationSchema.parse({})),
});

/**
 * Every section the daemon knows, each with the dot paths whose change needs a restart;
 * every other change is applied in place by live-config.ts. Each package owns its section
 * schema; the daemon only composes them.
 */
export const configSections = {
  gateway: {
    schema: gatewaySectionSchema.default(gatewaySectionSchema.parse({})),
    // The listening socket is bound once; gateway.restart re-binds it in process.
    restartRequired: ['host', 'port'],
  },
  daemon: {
    schema: daemonLoggingSchema.default(daemonLoggingSchema.parse({})),
    // Levels, the log file (path, roll size, copies) and the cache trace apply in place.
    restartRequired: [],
  },
  observability: {
    schema: observabilitySectionSchema.default(observabilitySectionSchema.parse({})),
    // The open streams take a new rotation at their next write; the age sweep runs at start.
    restartRequired: [],
  },
  storage: {
    schema: storageSectionSchema.default(storageSectionSchema.parse({})),
    restartRequired: ['*'],
  },
  graph: {
    schema: graphSectionSchema.default(graphSectionSchema.parse({})),
    restartRequired: [],
  },
  // A changed launch key stops the running browser; the next call launches it anew.
  browser: {
    schema: browserSectionSchema.default(browserSectionSchema.parse({})),
    restartRequired: [],
  },
  webhooks: {
    schema: webhooksSectionSchema.default(webhooksSectionSchema.parse({})),
    restartRequired: [],
  },
  agents: {
    schema: agentsSectionSchema.default(agentsSectionSchema.parse({})),
    restartRequired: [],
  },
  providers: {
    schema: providersSectionSchema.default(providersSectionSchema.parse({})),
    restartRequired: [],
  },
  contextEngine: {
    schema: contextEngineSectionSchema.default(contextEngineSectionSchema.parse({})),
    restartRequired: [],
  },
  memory: {
    schema: memorySectionSchema.default(memorySectionSchema.parse({})),
    // Turning memory on opens the store; off withdraws it from methods, recall and tools.
    restartRequired: [],
  },
  cron: {
    schema: cronSectionSchema.default(cronSectionSchema.parse({})),
    restartRequired: [],
  },
  heartbeat: {
    schema: heartbeatSectionSchema.default(heartbeatSectionSchema.parse({})),
    restartRequired: [],
  },
} as const;

/** The parsed daemon configuration. */
export interface DaemonConfig {
  gateway: z.infer<typeof gatewaySectionSchema>;
  daemon: z.infer<typeof daemonLoggingSchema>;
  observability: z.infer<typeof observabilitySectionSchema>;
  storage: z.infer<typeof storageSectionSchema>;
  graph: z.infer<typeof graphSectionSchema>;
  browser: z.infer<typeof browserSectionSchema>;
  webhooks: z.infer<typeof webhooksSectionSchema>;
  agents: z.infer<typeof agentsSectionSchema>;
  providers: z.infer<typeof providersSectionSchema>;
  contextEngine: z.infer<typeof contextEngineSectionSchema>;
  memory: z.infer<typeof memorySectionSchema>;
  cron: z.infer<typeof cronSectionSchema>;
  heartbeat: z.infer<typeof heartbeatSectionSchema>;
}
