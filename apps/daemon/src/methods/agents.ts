import { type AgentRuntime, entityIdSchema } from '@agentd/agent-runtime';
import { redactConfig } from '@agentd/config-store';
import { inspectValue, UNSAFE_KEYS } from '@agentd/input-guards';
import { z } from 'zod';
import { toRpcError } from './agent-errors.js';
import { methodsOf } from './define.js';

const idParams = z.object({ agentId: entityIdSchema }).strict();

/**
 * Refuses `constructor` and `prototype` as keys anywhere in an agent definition (the gateway
 * refuses `__proto__` already): the config store refuses them when the definition is
 * persisted, which reached the caller as -32603 instead of a -32602 naming the key.
 */
function refuseUnsafeKeys(params: Record<string, unknown>, context: z.RefinementCtx): void {
  const problem = inspectValue(params, { maxDepth: 10_000, refusedKeys: UNSAFE_KEYS });
  if (problem?.kind !== 'key') return;
  context.addIssue({ code: 'custom', path: problem.path, message: `the key ${problem.key} is not allowed` });
}

/**
 * agents.*: definitions persisted in config.yaml (`agents.entries`), applied live. Answers that
 * carry a definition are redacted like `config.read` (an agent's own `apiKey` or credentials).
 */
export function agentsMethods(deps: { runtime: AgentRuntime }) {
  const { runtime } = deps;
  const { adminMethod } = methodsOf('agents', toRpcError);
  return [
    adminMethod('list', {
      description: 'Identifiers of every agent, the built-in default included.',
      handler: () => ({ agents: runtime.agents.list() }),
    }),
    adminMethod('create', {
      description: 'Create an agent (id from `agentId` or derived from `name`); persisted to config.',
      // The runtime validates the full definition and names the failing field.
      params: z
        .looseObject({ name: z.string().min(1).max(200), agentId: entityIdSchema.optional() })
        .superRefine(refuseUnsafeKeys),
      handler: async (params) => redactConfig(await runtime.agents.create(params)),
    }),
    adminMethod('get', {
      description: 'The configuration of one agent.',
      params: idParams,
      handler: ({ agentId }) => redactConfig(runtime.agents.get(agentId)),
    }),
    adminMethod('update', {
      description:
        'Change only the given fields, live; `dryRun` validates fully (probing a changed provider) and persists nothing.',
      params: z
        .looseObject({ agentId: entityIdSchema, dryRun: z.boolean().optional() })
        .superRefine(refuseUnsafeKeys),
      handler: async ({ agentId, dryRun, ...patch }) =>
        redactConfig(await runtime.agents.update(agentId, patch, { dryRun: dryRun ?? false })),
    }),
    adminMethod('delete', {
      description: 'Remove an agent; its sessions stay but refuse new turns.',
      params: idParams,
      handler: ({ agentId }) => runtime.agents.delete(agentId),
    }),
    adminMethod('suspend', {
      description: 'Refuse new messages for an agent; turns in flight finish.',
      params: idParams,
      handler: ({ agentId }) => runtime.agents.suspend(agentId),
    }),
    adminMethod('resume', {
      description: 'Accept messages again.',
      params: idParams,
      handler: ({ agentId }) => runtime.agents.resume(agentId),
    }),
  ];
}
