import { type HeartbeatService, MAX_WAKE_TEXT } from '@agentd/cron-wakegate';
import { z } from 'zod';
import { methodsOf } from './define.js';

/** scheduler.wake: the scheduler-wide wake, through the wake coalescer (unrelated to per-job wake-gates). */
export function schedulerMethods(deps: { heartbeat: HeartbeatService }) {
  const { rpcMethod } = methodsOf('scheduler');
  return [
    rpcMethod('wake', {
      description:
        'Ask for a heartbeat now; rapid calls are coalesced into one beat. Fire-and-forget; text joins the beat.',
      params: z
        .object({
          source: z.string().min(1).max(64).default('agent'),
          text: z.string().min(1).max(MAX_WAKE_TEXT).optional(),
        })
        .strict(),
      handler: ({ source, text }) => ({ ...deps.heartbeat.wake(source, text), source }),
    }),
  ];
}
