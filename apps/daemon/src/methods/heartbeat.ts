import { type HeartbeatService, heartbeatUpdateSchema } from '@agentd/cron-wakegate';
import { z } from 'zod';
import { cronRpcError } from './cron.js';
import { methodsOf } from './define.js';

/** heartbeat.*: status and history (rpc), trigger and update (admin). */
export function heartbeatMethods(deps: { heartbeat: HeartbeatService }) {
  const { heartbeat } = deps;
  const { rpcMethod, adminMethod } = methodsOf('heartbeat', cronRpcError);
  return [
    rpcMethod('status', {
      description: 'Whether periodic beats run, their interval, the last and next beat, queued wake texts.',
      handler: () => heartbeat.status(),
    }),
    rpcMethod('history', {
      description: 'Past beats, newest first: what asked for them, outcome, duration, texts carried.',
      params: z.object({ limit: z.number().int().min(1).max(1000).optional() }).strict(),
      handler: async ({ limit }) => ({ beats: await heartbeat.history({ limit }) }),
    }),
    adminMethod('trigger', {
      description: 'Run a beat now (coalesced with other wakes); fire-and-forget.',
      params: z.object({ reason: z.string().min(1).max(64).optional() }).strict(),
      handler: ({ reason }) => heartbeat.trigger(reason),
    }),
    adminMethod('update', {
      description:
        'Change enabled, intervalMs, prompt or agentId; written to config.yaml and applied at once.',
      params: heartbeatUpdateSchema,
      handler: (params) => heartbeat.update(params),
    }),
  ];
}
