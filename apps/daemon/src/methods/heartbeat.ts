import { type HeartbeatService, heartbeatUpdateSchema } from '@agentd/cron-wakegate';
import { defineMethod } from '@agentd/rpc-core';
import { z } from 'zod';
import { cronRpcError } from './cron.js';

/** heartbeat.*: status and history (rpc), trigger and update (admin). */
export function heartbeatMethods(deps: { heartbeat: HeartbeatService }) {
  const { heartbeat } = deps;
  return [
    defineMethod({
      name: 'heartbeat.status',
      scope: 'rpc',
      description: 'Whether periodic beats run, their interval, the last and next beat, queued wake texts.',
      params: z.object({}).strict(),
      handler: () => heartbeat.status(),
    }),
    defineMethod({
      name: 'heartbeat.history',
      scope: 'rpc',
      description: 'Past beats, newest first: what asked for them, outcome, duration, texts carried.',
      params: z.object({ limit: z.number().int().min(1).max(1000).optional() }).strict(),
      handler: async ({ limit }) => ({ beats: await heartbeat.history({ limit }) }),
    }),
    defineMethod({
      name: 'heartbeat.trigger',
      scope: 'admin',
      description: 'Run a beat now (coalesced with other wakes); fire-and-forget.',
      params: z.object({ reason: z.string().min(1).max(64).optional() }).strict(),
      handler: ({ reason }) => heartbeat.trigger(reason),
    }),
    defineMethod({
      name: 'heartbeat.update',
      scope: 'admin',
      description:
        'Change enabled, intervalMs, prompt or agentId; written to config.yaml and applied at once.',
      params: heartbeatUpdateSchema,
      handler: async (params) => {
        try {
          return await heartbeat.update(params);
        } catch (error) {
          throw cronRpcError(error);
        }
      },
    }),
  ];
}
