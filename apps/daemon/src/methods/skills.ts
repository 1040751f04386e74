import { entityIdSchema } from '@agentd/agent-runtime';
import { RpcError } from '@agentd/rpc-core';
import { importParamsSchema, isSkillsError, type SkillsService, skillNameSchema } from '@agentd/skills';
import { z } from 'zod';
import { methodsOf } from './define.js';

/**
 * Skills failures on the wire: an unknown skill is -32004; a registry outside the allowlist is
 * -32602 naming `registry`, a blocked name -32602 naming `name`; a refused import (fetch, archive, scan, changed hash) is -32000 with
 * its findings or the pinned and fetched hashes in `data`.
 */
function skillsRpcError(error: unknown): unknown {
  if (!isSkillsError(error)) return error;
  switch (error.code) {
    case 'SKILL_NOT_FOUND':
      return RpcError.notFound('skill', String(error.data?.name ?? ''));
    case 'REGISTRY_NOT_ALLOWED':
    case 'INVALID_OPTIONS':
      return RpcError.invalidParams(error.message, [
        { path: ['registry'], code: 'not_allowed', message: error.message },
      ]);
    case 'SKILL_BLOCKED':
      return RpcError.invalidParams(error.message, [
        { path: ['name'], code: 'blocked', message: error.message },
      ]);
    case 'HASH_MISMATCH':
    case 'SCAN_REFUSED':
    case 'FETCH_FAILED':
    case 'INVALID_ARCHIVE':
    case 'INVALID_SKILL':
      return new RpcError(-32000, error.message, {
        data: { reason: error.code.toLowerCase(), ...error.data },
      });
    default:
      return error;
  }
}

/** skills.*: list and get (rpc): what agents can load and why a skill cannot; import (admin): vetted, pinned, audited. */
export function skillsMethods(deps: { skills: SkillsService }) {
  const { skills } = deps;
  const { rpcMethod, adminMethod } = methodsOf('skills', skillsRpcError);
  return [
    rpcMethod('list', {
      description:
        'Skills with source, trust tier, version, hash, required tools and load errors: the daemon-wide and imported ones, and with agentId that agent’s workspace skills.',
      params: z.object({ agentId: entityIdSchema.optional() }).strict(),
      handler: async ({ agentId }) => ({ skills: await skills.list(agentId) }),
    }),
    rpcMethod('get', {
      description: 'One skill (the one that wins precedence) with its files.',
      params: z.object({ name: skillNameSchema, agentId: entityIdSchema.optional() }).strict(),
      handler: ({ name, agentId }) => skills.get(name, agentId),
    }),
    adminMethod('import', {
      description:
        'Import a skill from a registry of skills.import.registries: the archive hash is pinned, every file scanned before it is written; a changed archive needs confirm: true.',
      params: importParamsSchema,
      handler: (params, context) => skills.import(params, { caller: context.identity.tokenId }),
    }),
  ];
}
