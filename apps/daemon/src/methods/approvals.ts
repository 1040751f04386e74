import { sessionKeySchema } from '@agentd/agent-runtime';
import { type ApprovalService, isApprovalsError } from '@agentd/approvals';
import { RpcError } from '@agentd/rpc-core';
import { z } from 'zod';
import { methodsOf } from './define.js';

/** Unknown request ids answer -32004 `Approval request not found: <id>`; the rest is unchanged. */
function approvalRpcError(error: unknown): unknown {
  if (isApprovalsError(error, 'REQUEST_NOT_FOUND'))
    return RpcError.notFound('approval request', String(error.data?.id ?? ''));
  return error;
}

const reasonSchema = z.string().min(1).max(1_000);

/**
 * admin.approval.*: the pending approval requests of tool calls and their decisions (all
 * admin). The caller's client id is recorded as who resolved; the token id goes to the audit.
 */
export function approvalMethods(deps: { approvals: ApprovalService }) {
  const { approvals } = deps;
  const { adminMethod } = methodsOf('admin.approval', approvalRpcError);
  return [
    adminMethod('pending', {
      description:
        'Pending approval requests, oldest first: id, session, agent, tool, scrubbed argument digest and age.',
      handler: () => ({ requests: approvals.pending() }),
    }),
    adminMethod('resolve', {
      description: 'Approve or deny one pending request; the waiting tool call runs or is refused.',
      params: z
        .object({ id: z.string().min(1).max(200), approved: z.boolean(), reason: reasonSchema.optional() })
        .strict(),
      handler: ({ id, approved, reason }, context) =>
        approvals.resolve(id, approved, {
          reason,
          resolvedBy: context.clientId,
          caller: context.identity.tokenId,
        }),
    }),
    adminMethod('resolveAll', {
      description: 'Approve or deny every pending request, or those of one session.',
      params: z
        .object({
          approved: z.boolean(),
          sessionKey: sessionKeySchema.optional(),
          approvedBy: z.string().min(1).max(200).default('operator'),
          reason: reasonSchema.optional(),
        })
        .strict(),
      handler: ({ approved, sessionKey, approvedBy, reason }, context) =>
        approvals.resolveAll(approved, {
          sessionKey,
          reason,
          resolvedBy: approvedBy,
          caller: context.identity.tokenId,
        }),
    }),
    adminMethod('clearDenialCache', {
      description: 'Forget every cached denial, so the next call of a denied tool asks again.',
      handler: () => {
        approvals.clearDenialCache();
        return { cleared: true as const };
      },
    }),
  ];
}
