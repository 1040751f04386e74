import {
  agentsSectionSchema,
  contextEngineSectionSchema,
  providersSectionSchema,
} from '@agentd/agent-runtime';
import { approvalsSectionSchema } from '@agentd/approvals';
import { gatewayTokensSchema } from '@agentd/auth-scopes';
import { autonomySectionSchema, securitySectionSchema } from '@agentd/autonomy';
import { orchestrateSectionSchema } from '@agentd/orchestrate';
import { graphSectionSchema } from '@agentd/graph-engine';
import { browserSectionSchema } from '@agentd/browser';
import { channelsSectionSchema, notificationsSectionSchema } from '@agentd/channels';
import { cronSectionSchema, heartbeatSectionSchema } from '@agentd/cron-wakegate';
import { learningSectionSchema } from '@agentd/learning';
import { daemonLoggingSchema, logRotationSchema } from '@agentd/logging';
import { mediaSectionSchema } from '@agentd/media';
import { memorySectionSchema } from '@agentd/memory-store';
import { openaiApiSectionSchema } from '@agentd/openai-api';
import { mcpSectionSchema } from '@agentd/mcp';
import { metricsSectionSchema } from '@agentd/metrics';
import { telemetrySectionSchema } from '@agentd/telemetry';
import { gatewayTransportSchema } from '@agentd/rpc-core';
import { secretsSectionSchema } from '@agentd/secrets';
import { skillsSectionSchema } from '@agentd/skills';
import { clusterSectionSchema, storageSectionSchema } from '@agentd/storage';
import { webhooksSectionSchema } from '@agentd/webhooks-hmac';
import { workspaceSectionSchema } from '@agentd/workspace';
import { terminalSectionSchema } from '@agentd/terminal';
import type { ConfigOf } from '@agentd/config-store';
import { z } from 'zod';
import type { util } from 'zod/v4/core';

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
  /**
   * Resident memory, MB, above which new agent turns are refused with an "overloaded, retry
   * after" error until it falls below 90 % of it; 0 turns the guard off. Set it to about 70 % of
   * the memory the service may use. @default 0
   */
  memoryHighWaterMb: z.number().int().min(0).max(1_048_576).default(0),
  /**
   * At a stop (SIGTERM), how long inbound channel turns still running may take to end and queue
   * their answers; a turn cut off runs again at the next start.
   */
  shutdownGraceMs: z.number().int().min(0).max(600_000).default(10_000),
});

/**
 * `schema` with, as its default, what it makes of `{}`: a config that leaves the key out gets
 * every field's own default instead of a missing value.
 */
function defaultedToEmpty<S extends z.ZodType<object>>(schema: S): z.ZodDefault<S> {
  // A parsed value is never undefined; TypeScript cannot see that through the generic output type.
  return schema.default(schema.parse({}) as util.NoUndefined<z.output<S>>);
}

/**
 * One entry of {@link configSections}: the package's section schema (defaulted, so a config
 * file may leave the section out) and the dot paths whose change needs a restart.
 */
function section<S extends z.ZodType<object>, const R extends readonly string[] = readonly []>(
  schema: S,
  restartRequired: R = [] as unknown as R,
): { schema: z.ZodDefault<S>; restartRequired: R } {
  return { schema: defaultedToEmpty(schema), restartRequired };
}

/** The `observability` section; later packages add their keys beside `logRotation`. */
export const observabilitySectionSchema = z.object({
  logRotation: defaultedToEmpty(logRotationSchema),
});

/**
 * Every section the daemon knows, each with the dot paths whose change needs a restart;
 * every other change is applied in place by live-config.ts. Each package owns its section
 * schema; the daemon only composes them.
 */
export const configSections = {
  // The listening socket is bound once; gateway.restart re-binds it in process.
  gateway: section(gatewaySectionSchema, ['host', 'port', 'shutdownGraceMs']),
  // Levels, the log file (path, roll size, copies) and the cache trace apply in place.
  daemon: section(daemonLoggingSchema),
  // The open streams take a new rotation at their next write; the age sweep runs at start.
  observability: section(observabilitySectionSchema),
  storage: section(storageSectionSchema, ['*']),
  // Membership is joined once, at start, with this instance's id, URL and lease.
  cluster: section(clusterSectionSchema, ['*']),
  graph: section(graphSectionSchema),
  // A changed launch key stops the running browser; the next call launches it anew.
  browser: section(browserSectionSchema),
  webhooks: section(webhooksSectionSchema),
  agents: section(agentsSectionSchema),
  providers: section(providersSectionSchema),
  contextEngine: section(contextEngineSectionSchema),
  // Turning memory on opens the store; off withdraws it from methods, recall and tools.
  memory: section(memorySectionSchema),
  cron: section(cronSectionSchema),
  heartbeat: section(heartbeatSectionSchema),
  // Rules, modes, timeout and caches apply from the next tool call; waiting requests keep their expiry.
  approvals: section(approvalsSectionSchema),
  // The master key is read once, when secrets.db is opened.
  secrets: section(secretsSectionSchema, ['*']),
  // Engines, providers and limits apply to the next media call; provider apiKeys may be ${secret:NAME}.
  media: section(mediaSectionSchema),
  // Per-agent git workspaces; every key applies to the next call.
  workspace: section(workspaceSectionSchema),
  // Terminal drive limits; open drives are checked against a new section at the next sweep.
  terminal: section(terminalSectionSchema),
  // Sub-agent limits, budgets, leases and the denial breaker: from the next spawn and gate decision.
  autonomy: section(autonomySectionSchema),
  // The jailed orchestrate tool: limits, bwrap path and denylist from the next script run.
  orchestrate: section(orchestrateSectionSchema),
  // security.agentToAgent.steerInject: from the next subagent.steer.
  security: section(securitySectionSchema),
  // `/v1`: on, off and its limits apply to the next request (a new gateway generation).
  openaiApi: section(openaiApiSectionSchema),
  // `/mcp` follows `mcp.serve` at the next request; `mcp.servers` are reconciled in place.
  mcp: section(mcpSectionSchema),
  // Registries, the daemon skills directory and scan limits apply from the next call.
  skills: section(skillsSectionSchema),
  // Outcome resolution, funnel gates and the sweep interval apply from the next turn or sweep.
  learning: section(learningSectionSchema),
  // A changed platform section rebuilds that adapter; the queue keeps its entries.
  channels: section(channelsSectionSchema),
  notifications: section(notificationsSectionSchema),
  // `GET /metrics`: the registry and its separate listener are made at start.
  metrics: section(metricsSectionSchema, ['*']),
  // OTLP traces: the exporter is made at start (nothing of OpenTelemetry loads without an endpoint).
  telemetry: section(telemetrySectionSchema, ['*']),
};

/**
 * The parsed daemon configuration: each section's schema output, derived from
 * {@link configSections} so a new section cannot be left out of it.
 */
export interface DaemonConfig extends ConfigOf<typeof configSections> {}
