import { gatewayTokensSchema } from '@agentd/auth-scopes';
import { daemonLoggingSchema, logRotationSchema } from '@agentd/logging';
import { memorySectionSchema } from '@agentd/memory-store';
import { gatewayTransportSchema } from '@agentd/rpc-core';
import { storageSectionSchema } from '@agentd/storage';
import { z } from 'zod';

/** Defaults from decisions.md: loopback only, port 7420. */
export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 7420;

/**
 * The `gateway` section: the rpc-core transport limits, where to listen and the tokens.
 * Host and port changes need a restart (`gateway.restart` re-binds in process).
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
 * Every section the daemon knows, each with the dot paths whose change needs a restart.
 * Each package owns its section schema; the daemon only composes them.
 */
export const configSections = {
  gateway: {
    schema: gatewaySectionSchema.default(gatewaySectionSchema.parse({})),
    restartRequired: ['host', 'port'],
  },
  daemon: {
    schema: daemonLoggingSchema.default(daemonLoggingSchema.parse({})),
    restartRequired: ['logging'],
  },
  observability: {
    schema: observabilitySectionSchema.default(observabilitySectionSchema.parse({})),
    restartRequired: [],
  },
  storage: {
    schema: storageSectionSchema.default(storageSectionSchema.parse({})),
    restartRequired: ['*'],
  },
  memory: {
    schema: memorySectionSchema.default(memorySectionSchema.parse({})),
    restartRequired: ['*'],
  },
} as const;

/** The parsed daemon configuration. */
export interface DaemonConfig {
  gateway: z.infer<typeof gatewaySectionSchema>;
  daemon: z.infer<typeof daemonLoggingSchema>;
  observability: z.infer<typeof observabilitySectionSchema>;
  storage: z.infer<typeof storageSectionSchema>;
  memory: z.infer<typeof memorySectionSchema>;
}
