import type { AgentRuntime } from '@agentd/agent-runtime';
import { z } from 'zod';
import { methodsOf } from './define.js';

/** models.list: configured providers and their models; never keys or headers. */
export function modelsMethods(deps: { runtime: AgentRuntime }) {
  const { rpcMethod } = methodsOf();
  return [
    rpcMethod({
      name: 'models.list',
      description:
        'Configured providers and models with capability class, context window and prices; no keys.',
      params: z.object({}).strict(),
      handler: () => deps.runtime.models(),
    }),
  ];
}
