import { type AgentRuntime, entityIdSchema } from '@agentd/agent-runtime';
import { defineMethod } from '@agentd/rpc-core';
import { z } from 'zod';
import { mapped } from './agent-errors.js';

const idParams = z.object({ agentId: entityIdSchema }).strict();

/** agents.*: definitions persisted in config.yaml (`agents.entries`), applied live. */
export function agentsMethods(deps: { runtime: AgentRuntime }) {
  const { runtime } = deps;
  return [
    defineMethod({
      name: 'agents.list',
      scope: 'admin',
      description: 'Identifiers of every agent, the built-in default included.',
      params: z.object({}).strict(),
      handler: () => ({ agents: runtime.agents.list() }),
    }),
    defineMethod({
      name: 'agents.create',
      scope: 'admin',
      description: 'Create an agent (id from `agentId` or derived from `name`); persisted to config.',
      // The runtime validates the full definition and names the failing field.
      params: z.looseObject({ name: z.string().min(1).max(200), agentId: entityIdSchema.optional() }),
      handler: (params) => mapped(() => runtime.agents.create(params)),
    }),
    defineMethod({
      name: 'agents.get',
      scope: 'admin',
      description: 'The configuration of one agent.',
      params: idParams,
      handler: ({ agentId }) => mapped(() => runtime.agents.get(agentId)),
    }),
    defineMethod({
      name: 'agents.update',
      scope: 'admin',
      description:
        'Change only the given fields, live; `dryRun` validates fully (probing a changed provider) and persists nothing.',
      params: z.looseObject({ agentId: entityIdSchema, dryRun: z.boolean().optional() }),
      handler: ({ agentId, dryRun, ...patch }) =>
        mapped(() => runtime.agents.update(agentId, patch, { dryRun: dryRun ?? false })),
    }),
    defineMethod({
      name: 'agents.delete',
      scope: 'admin',
      description: 'Remove an agent; its sessions stay but refuse new turns.',
      params: idParams,
      handler: ({ agentId }) => mapped(() => runtime.agents.delete(agentId)),
    }),
    defineMethod({
      name: 'agents.suspend',
      scope: 'admin',
      description: 'Refuse new messages for an agent; turns in flight finish.',
      params: idParams,
      handler: ({ agentId }) => mapped(() => runtime.agents.suspend(agentId)),
    }),
    defineMethod({
      name: 'agents.resume',
      scope: 'admin',
      description: 'Accept messages again.',
      params: idParams,
      handler: ({ agentId }) => mapped(() => runtime.agents.resume(agentId)),
    }),
  ];
}
