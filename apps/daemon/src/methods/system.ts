import { defineMethod } from '@agentd/rpc-core';
import { z } from 'zod';

/** system.ping: liveness for clients and load balancers. */
export function systemMethods(deps: { now: () => number }) {
  return [
    defineMethod({
      name: 'system.ping',
      scope: 'rpc',
      description: 'Liveness check; answers with the server time.',
      params: z.object({}).strict(),
      result: z.object({ pong: z.literal(true), ts: z.number() }),
      handler: () => ({ pong: true as const, ts: deps.now() }),
    }),
  ];
}
