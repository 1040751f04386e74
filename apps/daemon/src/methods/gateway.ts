import { defineMethod } from '@agentd/rpc-core';
import { z } from 'zod';

/** What the gateway methods need from the running daemon. */
export interface GatewayControl {
  startedAt: number;
  configPaths: () => string[];
  sections: () => string[];
  /** Schedules an in-process re-init once the answer has been sent. */
  scheduleRestart: () => void;
}

/** gateway.status and gateway.restart. */
export function gatewayMethods(deps: { control: GatewayControl; now: () => number }) {
  return [
    defineMethod({
      name: 'gateway.status',
      scope: 'admin',
      description:
        'Process facts: pid, uptime in seconds, RSS bytes, Node version, config paths and sections.',
      params: z.object({}).strict(),
      handler: () => ({
        pid: process.pid,
        uptime: Math.round((deps.now() - deps.control.startedAt) / 1000),
        memoryUsage: process.memoryUsage.rss(),
        nodeVersion: process.version,
        configPaths: deps.control.configPaths(),
        sections: deps.control.sections(),
      }),
    }),
    defineMethod({
      name: 'gateway.restart',
      scope: 'admin',
      description:
        'Re-initialise the gateway in process: re-read the config, rebuild transports and limits, ' +
        'close WebSocket clients with 1001 so they reconnect.',
      params: z.object({}).strict(),
      handler: () => {
        deps.control.scheduleRestart();
        return { ok: true as const, restarting: true as const };
      },
    }),
  ];
}
