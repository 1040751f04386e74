import { entityIdSchema } from '@agentd/agent-runtime';
import type { LearningService } from '@agentd/learning';
import { z } from 'zod';
import { methodsOf } from './define.js';

/** learning.status (rpc): learned procedures by lifecycle state, turn outcomes, memory lifecycle and the last sweep (counts only). */
export function learningMethods(deps: { learning: LearningService }) {
  const { rpcMethod } = methodsOf('learning');
  return [
    rpcMethod('status', {
      description:
        'Learned procedures by lifecycle state (candidate, active, stale, archived), turn outcomes, demoted memories and the last Memory lifecycle sweep.',
      params: z.object({ agentId: entityIdSchema.optional() }).strict(),
      handler: ({ agentId }) => deps.learning.status(agentId),
    }),
  ];
}
