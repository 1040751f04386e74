import type { AgentRuntime } from '@agentd/agent-runtime';
import { methodsOf } from './define.js';

/** models.list: configured providers and their models; never keys or headers. */
export function modelsMethods(deps: { runtime: AgentRuntime }) {
  const { rpcMethod } = methodsOf('models');
  return [
    rpcMethod('list', {
      description:
        'Configured providers and models with capability class, context window and prices; no keys.',
      handler: () => deps.runtime.models(),
    }),
  ];
}
