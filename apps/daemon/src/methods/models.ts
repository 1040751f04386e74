import type { AgentRuntime } from '@agentd/agent-runtime';
import { defineMethod } from '@agentd/rpc-core';
import { z } from 'zod';

/** models.list: configured providers and their models; never keys or headers. */
export function modelsMethods(deps: { runtime: AgentRuntime }) {
  return [
    defineMethod({
      name: 'models.list',
      scope: 'rpc',
      description:
        'Configured providers and models with capability class, context window and prices; no keys.',
      params: z.object({}).strict(),
      handler: () => deps.runtime.models(),
    }),
  ];
}
