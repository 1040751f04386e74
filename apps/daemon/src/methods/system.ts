import { z } from 'zod';
import { methodsOf } from './define.js';

/** system.ping: liveness for clients and load balancers. */
export function systemMethods(deps: { now: () => number }) {
  const { rpcMethod } = methodsOf('system');
  return [
    rpcMethod('ping', {
      description: 'Liveness check; answers with the server time.',
      result: z.object({ pong: z.literal(true), ts: z.number() }),
      handler: () => ({ pong: true as const, ts: deps.now() }),
    }),
  ];
}
