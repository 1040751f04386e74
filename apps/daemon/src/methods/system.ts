import { z } from 'zod';
import { methodsOf } from './define.js';

/** system.ping: liveness for clients and load balancers. */
export function systemMethods(deps: { now: () => number }) {
  const { rpcMethod } = methodsOf();
  return [
    rpcMethod({
      name: 'system.ping',
      description: 'Liveness check; answers with the server time.',
      params: z.object({}).strict(),
      result: z.object({ pong: z.literal(true), ts: z.number() }),
      handler: () => ({ pong: true as const, ts: deps.now() }),
    }),
  ];
}
