import { type AgentRuntime, entityIdSchema, sessionKeySchema } from '@agentd/agent-runtime';
import { z } from 'zod';
import { defaultSessionKey, rpcTurn } from './agent.js';
import { toRpcError } from './agent-errors.js';
import { methodsOf } from './define.js';
import { type TenantGuard, tenantGuard } from './tenancy.js';

const adminKey = z.object({ session_key: sessionKeySchema }).strict();

/**
 * session.*: status, history, list, send, search (rpc); delete, reset, export, compact,
 * reset_conversation (admin). Admin methods take the snake_case `session_key`; strict
 * schemas reject `key` there, as the contract requires for session.delete.
 */
export function sessionMethods(deps: { runtime: AgentRuntime; tenants?: TenantGuard }) {
  const { runtime } = deps;
  const tenants = deps.tenants ?? tenantGuard();
  const { sessions } = runtime;
  const { rpcMethod, adminMethod } = methodsOf('session', toRpcError);
  return [
    rpcMethod('status', {
      description:
        "Model, token use, steps executed and step limit of a session (default: the caller's own).",
      params: z.object({ key: sessionKeySchema.optional() }).strict(),
      handler: ({ key }, context) =>
        sessions.status(tenants.session(context, key ?? defaultSessionKey(context))),
    }),
    rpcMethod('history', {
      description: 'The stored messages of a session, oldest first; `limit` newest before `beforeTs`.',
      params: z
        .object({
          key: sessionKeySchema,
          limit: z.number().int().min(1).max(10_000).optional(),
          beforeTs: z.number().int().nonnegative().optional(),
        })
        .strict(),
      handler: ({ key, limit, beforeTs }, context) =>
        sessions.history(tenants.session(context, key), {
          ...(limit !== undefined ? { limit } : {}),
          ...(beforeTs !== undefined ? { beforeTs } : {}),
        }),
    }),
    rpcMethod('list', {
      description: 'Sessions from the database, most recently active first.',
      params: z
        .object({
          sinceMs: z.number().int().nonnegative().optional(),
          kind: z.enum(['main', 'subagent', 'hook', 'cron', 'graph']).optional(),
          limit: z.number().int().min(1).max(1000).optional(),
        })
        .strict(),
      handler: async (params, context) => {
        const keyPrefix = tenants.prefix(context);
        const listed = await sessions.list({
          ...(params.sinceMs !== undefined ? { sinceMs: params.sinceMs } : {}),
          ...(params.kind !== undefined ? { kind: params.kind } : {}),
          ...(params.limit !== undefined ? { limit: params.limit } : {}),
          ...(keyPrefix !== undefined ? { keyPrefix } : {}),
        });
        return { sessions: listed.filter((session) => tenants.shows(context, String(session.sessionKey))) };
      },
    }),
    rpcMethod('send', {
      description: 'Send a message into a session (created on first use) and return the agent turn result.',
      params: z
        .object({
          key: sessionKeySchema,
          message: z.string().min(1).max(1_000_000),
          agentId: entityIdSchema.optional(),
        })
        .strict(),
      handler: ({ key, message, agentId }, context) =>
        runtime.runTurn(rpcTurn(context, { message, sessionKey: tenants.session(context, key), agentId })),
    }),
    rpcMethod('search', {
      description: 'Full-text search over transcripts; the best hit per session, best first.',
      params: z
        .object({ query: z.string().min(1).max(1000), limit: z.number().int().min(1).max(200).optional() })
        .strict(),
      handler: async ({ query, limit }, context) => {
        const keyPrefix = tenants.prefix(context);
        const hits = await sessions.search(query, limit ?? 20, keyPrefix !== undefined ? { keyPrefix } : {});
        return hits.filter((hit) => tenants.shows(context, hit.sessionKey));
      },
    }),
    adminMethod('delete', {
      description: 'Drop a session, its messages and its memory entries; returns the transcript.',
      params: adminKey,
      handler: ({ session_key }) => sessions.delete(session_key),
    }),
    adminMethod('reset', {
      description: 'Clear the messages of a session; metadata stays, cached approval decisions are cleared.',
      params: adminKey,
      handler: ({ session_key }) => sessions.reset(session_key),
    }),
    adminMethod('export', {
      description: 'The export record of a session: messages, metadata, counts and times.',
      params: adminKey,
      handler: ({ session_key }) => sessions.export(session_key),
    }),
    adminMethod('compact', {
      description: 'Summarise old history through the model into a kept summary that replaces it in context.',
      params: z.object({ key: sessionKeySchema }).strict(),
      handler: ({ key }) => sessions.compact(key),
    }),
    adminMethod('reset_conversation', {
      description:
        'Destroy the durable history and transcript of a session (irreversible, counts only); optionally its memories.',
      params: z
        .object({
          session_key: sessionKeySchema,
          memory: z.boolean().optional(),
          purge_derived: z.boolean().optional(),
        })
        .strict(),
      handler: ({ session_key, memory, purge_derived }) =>
        sessions.resetConversation(session_key, {
          memory: memory ?? false,
          purgeDerived: purge_derived ?? false,
        }),
    }),
  ];
}
