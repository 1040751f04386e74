import type { ClusterStatus } from '@agentd/contracts';
import { noopSecurityAudit, type SecurityAudit } from '@agentd/evidence/audit';
import { auditAdminChange, methodsOf } from './define.js';

/** What the gateway methods need from the running daemon. */
export interface GatewayControl {
  startedAt: number;
  configPaths: () => string[];
  sections: () => string[];
  /** State, tools and last error of each `mcp.servers` entry. */
  mcpServers?: () => unknown[];
  /** This instance and the live members of its cluster (itself only in single mode). */
  cluster: () => Promise<ClusterStatus>;
  /** Schedules an in-process re-init once the answer has been sent. */
  scheduleRestart: () => void;
}

/**
 * gateway.status and gateway.restart. A restart is an `audit:event` of kind `config`
 * (`medium`: every WebSocket client is disconnected); the config it re-reads is recorded
 * by the config-audit stream as method `reload`.
 */
export function gatewayMethods(deps: {
  control: GatewayControl;
  now: () => number;
  /** Producer of the admin-change audit event. @default emits nothing */
  audit?: SecurityAudit;
}) {
  const audit = deps.audit ?? noopSecurityAudit;
  const { adminMethod } = methodsOf('gateway');
  return [
    adminMethod('status', {
      description:
        'Process facts: pid, uptime in seconds, RSS bytes, Node version, config paths and sections; ' +
        'the state, tools and last error of each MCP server under mcp.servers; cluster: the mode ' +
        '(postgres or single), this instance id and the live instances (id, advertised URL, start ' +
        'and last heartbeat in epoch ms; in single mode this instance only).',
      handler: async () => ({
        pid: process.pid,
        uptime: Math.round((deps.now() - deps.control.startedAt) / 1000),
        memoryUsage: process.memoryUsage.rss(),
        nodeVersion: process.version,
        configPaths: deps.control.configPaths(),
        sections: deps.control.sections(),
        ...(deps.control.mcpServers ? { mcp: { servers: deps.control.mcpServers() } } : {}),
        cluster: await deps.control.cluster(),
      }),
    }),
    adminMethod('restart', {
      description:
        'Re-initialise the gateway in process: re-read the config, rebuild transports and limits, ' +
        'close WebSocket clients with 1001 so they reconnect.',
      handler: (_params, context) => {
        deps.control.scheduleRestart();
        auditAdminChange(audit, context, 'medium', { action: 'gateway_restart' });
        return { ok: true as const, restarting: true as const };
      },
    }),
  ];
}
