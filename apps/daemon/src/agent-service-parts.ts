// The services around the agents that services.ts starts: sub-agent runs (autonomy), webhooks,
// memory that follows the config, and the MCP tool host.
import { type AgentRuntime, DEFAULT_AGENT_ID } from '@agentd/agent-runtime';
import type { ApprovalService } from '@agentd/approvals';
import { type AutonomyService, createAutonomyService, resolveToolSet } from '@agentd/autonomy';
import { resolveSecretRefs } from '@agentd/config-store';
import type { AgentTurnRunner } from '@agentd/contracts';
import type { MemorySwitch } from '@agentd/memory-store';
import { createMcpToolHost, type McpToolHost } from '@agentd/mcp';
import type { LearningService } from '@agentd/learning';
import type { Coordinator } from '@agentd/storage';
import {
  createWebhookService,
  type HookResponseDeliverer,
  type WakeTarget,
  type WebhookService,
} from '@agentd/webhooks-hmac';
import { workspacePath } from '@agentd/workspace';
import { webhookAuditEvent } from '@agentd/evidence/audit';
import type { Lifecycle } from './lifecycle.js';

import type { ServiceContext, Stores } from './services.js';

/**
 * The sub-agent run service. It is made before the runtime (whose tool gates include its lease
 * gate) and reaches the runtime through `runtime()` only once a run starts.
 */
export function createAutonomy(
  context: ServiceContext,
  stores: Stores,
  runtime: () => AgentRuntime | undefined,
): AutonomyService {
  const { config, configStore, logger, now } = context;
  const { db, securityAudit, events } = stores;
  return createAutonomyService({
    db,
    // Cluster mode: runs owned and leased; kill, revoke and steer reach the owner on any instance.
    ...clustered(stores.coordinator),
    runner: () => {
      const started = runtime();
      if (!started) throw new Error('the agent runtime is not started');
      return started;
    },
    toolsOf: (agentId) => {
      const started = runtime();
      if (!started) return undefined;
      let agent: { tools: string[]; toolDenylist: string[] };
      try {
        agent = started.agents.get(agentId);
      } catch {
        return undefined;
      }
      const denied = configStore.current().agents.toolDenylist;
      return resolveToolSet(started.toolNames(), agent.tools, agent.toolDenylist, denied);
    },
    agentOf: async (sessionKey) => {
      const status = await runtime()
        ?.sessions.status(sessionKey)
        .catch(() => undefined);
      return typeof status?.agentId === 'string' ? status.agentId : undefined;
    },
    // The run's end becomes a note on an existing parent session, read by the parent's next turn.
    recordOnParent: async (parentSessionKey, note) => {
      await runtime()?.sessions.note(parentSessionKey, note);
    },
    costOf: async (sessionKey, sinceMs) =>
      (await runtime()?.billing.bySession(sessionKey, sinceMs))?.totalCost ?? 0,
    autonomy: config.autonomy,
    security: config.security,
    audit: securityAudit,
    events,
    logger: logger.module('agent'),
    now,
  });
}

/**
 * `{coordinator}` for a package that takes one, in cluster mode only: on libsql the packages
 * keep their in-process paths exactly as before.
 */
export function clustered(coordinator: Coordinator): { coordinator?: Coordinator } {
  return coordinator.mode === 'postgres' ? { coordinator } : {};
}

/** The webhook service: its turns run on `links.runner`, its verdicts land in the security audit. */
export function startWebhooks(
  context: ServiceContext,
  lifecycle: Lifecycle,
  stores: Stores,
  links: { runner: AgentTurnRunner; wakeTarget: WakeTarget; deliver: HookResponseDeliverer },
): Promise<WebhookService> {
  const { config, logger, now } = context;
  const { db, securityAudit, lookupSecret, events } = stores;
  return lifecycle.start(
    'webhooks',
    () =>
      createWebhookService({
        db,
        // Cluster mode: every instance's drainer claims from the one queue under leases, as long
        // as the cluster's other leases (`cluster.leaseMs`).
        ...clustered(stores.coordinator),
        // A homed agent's jobs are claimed on its home only.
        claimWhere: stores.affinity.notHomedElsewhere('agent_id', DEFAULT_AGENT_ID),
        ...(stores.coordinator.mode === 'postgres' && config.cluster.leaseMs !== undefined
          ? { jobLeaseMs: config.cluster.leaseMs }
          : {}),
        events,
        ...(context.spans ? { spans: context.spans } : {}),
        section: config.webhooks,
        resolveSecrets: (fields) => resolveSecretRefs(fields, lookupSecret),
        ...links,
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
}

/**
 * Memory's part of the runtime follows `memory.enabled` from the next turn: session.delete /
 * reset_conversation drop the session's memories by the contract's rules, agents with
 * memory.autoRecall get their memories recalled before each turn, and the memory tools.
 */
export function followMemory(
  memory: MemorySwitch,
  agentRuntime: AgentRuntime,
  learning: () => LearningService | undefined,
): void {
  memory.onSwitch((service) =>
    agentRuntime.useMemory(
      service && {
        memory: {
          deleteBySession: async (input) => (await service.store.deleteBySession(input)).memoriesDeleted,
        },
        recall: {
          // The learning layer counts which memories each turn recalled (the memory lifecycle).
          recall: async (request) => {
            const found = await service.autoRecall.recall(request);
            learning()?.noteRecall(
              request.sessionKey,
              found.entries.map((entry) => entry.id),
            );
            return found;
          },
          forget: (sessionKey) => service.autoRecall.forget?.(sessionKey),
        },
        tools: service.tools,
      },
    ),
  );
}

/**
 * MCP servers' tools join the runtime's as `<id>__<tool>`; servers connect in the background,
 * so an unreachable one never holds up the start (its state is in gateway.status).
 */
export function startMcpTools(
  context: ServiceContext,
  lifecycle: Lifecycle,
  agentRuntime: AgentRuntime,
  approvals: ApprovalService,
  lookupSecret: Stores['lookupSecret'],
): Promise<McpToolHost> {
  const { config, logger, now, dataDir } = context;
  return lifecycle.start(
    'mcp servers',
    () => {
      const host = createMcpToolHost({
        servers: config.mcp.servers,
        tools: {
          register: (tools) => agentRuntime.registerTools(tools),
          unregister: (names) => agentRuntime.unregisterTools(names),
        },
        resolveSecrets: (entry) => resolveSecretRefs(entry, lookupSecret),
        // Servers see the agents' workspaces as roots, sample with the asking agent's model
        // and elicit through the operator, both under the approval rules.
        client: {
          workspaceOf: (agentId) => workspacePath(dataDir, agentId),
          agentIds: () => agentRuntime.agents.list(),
          approve: (check) => approvals.check(check),
          complete: (request) => agentRuntime.complete(request),
        },
        logger: logger.module('mcp'),
        now,
      });
      void host.start();
      return host;
    },
    (host) => host.close(),
  );
}
