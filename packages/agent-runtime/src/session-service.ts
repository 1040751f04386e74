import type { AgentRegistry } from './agent-registry.js';
import { DEFAULT_AGENT_ID } from './config.js';
import { AgentRuntimeError } from './errors.js';
import type { ModelResolver, ResolvedModel } from './model-resolver.js';
import { requireSession } from './internal/require-session.js';
import { toModelMessage } from './internal/messages.js';
import type { RuntimeContext } from './runtime-context.js';
import { type CompactResult, compactSession } from './session-compaction.js';
import type { SessionKind, SessionMessage, SessionRecord, SessionSearchHit } from './session-store.js';
import { estimateMessageTokens } from './tokens.js';

/** The export record of a session (contract: "Session export record"). */
export interface SessionExport {
  sessionKey: string;
  messages: SessionMessage[];
  metadata: Record<string, unknown> & { agentId: string; channelType: string };
  messageCount: number;
  createdAt: number;
  updatedAt: number;
}

/** Result of `session.reset_conversation`. */
export interface ResetConversationResult {
  sessionKey: string;
  lcdRowsDeleted: number;
  sessionMessagesCleared: number;
  memoriesDeleted?: number;
  runtimeSessionDestroyed?: boolean;
}

/** The sessions API of the runtime (`AgentRuntime.sessions`): history, export, compact, reset. */
export interface SessionsApi {
  status(sessionKey: string): Promise<Record<string, unknown>>;
  history(
    sessionKey: string,
    options?: { limit?: number; beforeTs?: number },
  ): Promise<{ sessionKey: string; messages: SessionMessage[]; summary?: string }>;
  /** `keyPrefix` keeps only sessions whose key starts with it (a tenant's `<tenant>:`). */
  list(options?: {
    sinceMs?: number;
    kind?: SessionKind;
    keyPrefix?: string;
    limit?: number;
  }): Promise<Array<Record<string, unknown>>>;
  export(sessionKey: string): Promise<SessionExport>;
  delete(
    sessionKey: string,
  ): Promise<{ sessionKey: string; deleted: true; transcript: SessionExport; memoriesDeleted?: number }>;
  reset(sessionKey: string): Promise<{ sessionKey: string; reset: true; previousMessageCount: number }>;
  resetConversation(
    sessionKey: string,
    options?: { memory?: boolean; purgeDerived?: boolean },
  ): Promise<ResetConversationResult>;
  /** `keyPrefix` keeps only hits in sessions whose key starts with it. */
  search(query: string, limit?: number, options?: { keyPrefix?: string }): Promise<SessionSearchHit[]>;
  compact(sessionKey: string): Promise<CompactResult>;
  /**
   * Appends a user message to an existing session between its turns (under the session's
   * lock, so never inside a running turn): how a sub-agent's result reaches its parent's
   * next turn. Answers false when the session does not exist.
   */
  note(sessionKey: string, content: string): Promise<boolean>;
}

/**
 * Creates the sessions API. Operations that change a session run under the session's lock,
 * so they never interleave with a turn of the same session.
 */
export function createSessionService(
  ctx: RuntimeContext,
  agents: AgentRegistry,
  models: ModelResolver,
): SessionsApi {
  const { settings } = ctx;

  function exportOf(session: SessionRecord, messages: SessionMessage[]): SessionExport {
    return {
      sessionKey: session.sessionKey,
      messages,
      metadata: {
        ...session.metadata,
        agentId: session.agentId,
        channelType: session.channelType,
        kind: session.kind,
        turns: session.turns,
        tokens: {
          input: session.inputTokens,
          output: session.outputTokens,
          cacheRead: session.cacheReadTokens,
          cacheWrite: session.cacheWriteTokens,
        },
        costUsd: session.costUsd,
        ...(session.summary
          ? { summary: session.summary, compactedBeforeSeq: session.compactedBeforeSeq }
          : {}),
      },
      messageCount: session.messageCount,
      createdAt: session.createdAt,
      updatedAt: session.updatedAt,
    };
  }

  const api: SessionsApi = {
    async status(sessionKey) {
      const session = await requireSession(ctx, sessionKey);
      const agent = agents.find(session.agentId);
      let model: ResolvedModel | undefined;
      try {
        model = agent ? models.resolve(agent, undefined) : undefined;
      } catch {
        model = undefined;
      }
      return {
        sessionKey,
        agentId: session.agentId,
        agentStatus: agent ? (agent.suspended ? 'suspended' : 'active') : 'deleted',
        provider: session.lastProvider ?? model?.providerId,
        model: session.lastModel ?? model?.model,
        contextWindow: model?.contextWindow,
        tokens: {
          input: session.inputTokens,
          output: session.outputTokens,
          total: session.inputTokens + session.outputTokens,
          cacheRead: session.cacheReadTokens,
          cacheWrite: session.cacheWriteTokens,
        },
        costUsd: session.costUsd,
        turns: session.turns,
        stepsExecuted: session.steps,
        lastTurnSteps: session.lastSteps,
        stepLimit: agent?.maxSteps,
        messageCount: session.messageCount,
        compacted: session.summary !== undefined,
        kind: session.kind,
        channelType: session.channelType,
        createdAt: session.createdAt,
        updatedAt: session.updatedAt,
      };
    },
    async history(sessionKey, historyOptions = {}) {
      const session = await requireSession(ctx, sessionKey);
      const messages = await ctx.store.history(session, historyOptions);
      return { sessionKey, messages, ...(session.summary ? { summary: session.summary } : {}) };
    },
    async list(listOptions = {}) {
      const rows = await ctx.store.list({
        sinceMs: listOptions.sinceMs,
        kind: listOptions.kind,
        keyPrefix: listOptions.keyPrefix,
        limit: listOptions.limit ?? 100,
      });
      return rows.map((session) => ({
        sessionKey: session.sessionKey,
        agentId: session.agentId,
        channelType: session.channelType,
        kind: session.kind,
        messageCount: session.messageCount,
        turns: session.turns,
        createdAt: session.createdAt,
        updatedAt: session.updatedAt,
      }));
    },
    async export(sessionKey) {
      const session = await requireSession(ctx, sessionKey);
      return exportOf(session, await ctx.store.history(session));
    },
    delete: (sessionKey) =>
      ctx.locks.run(sessionKey, async () => {
        ctx.forgetSession(sessionKey);
        const removed = await ctx.store.delete(sessionKey);
        if (!removed) {
          throw new AgentRuntimeError('SESSION_NOT_FOUND', `Session not found: ${sessionKey}`, {
            data: { sessionKey },
          });
        }
        let memoriesDeleted: number | undefined;
        if (settings.memory)
          memoriesDeleted = await deleteMemories(removed.session.agentId, sessionKey, false);
        ctx.events.emit('session:deleted', {
          sessionKey,
          agentId: removed.session.agentId,
          messages: removed.messages.length,
        });
        return {
          sessionKey,
          deleted: true as const,
          transcript: exportOf(removed.session, removed.messages),
          ...(memoriesDeleted !== undefined ? { memoriesDeleted } : {}),
        };
      }),
    reset: (sessionKey) =>
      ctx.locks.run(sessionKey, async () => {
        ctx.forgetSession(sessionKey);
        const cleared = await ctx.store.clearMessages(sessionKey, ctx.now());
        if (!cleared) {
          throw new AgentRuntimeError('SESSION_NOT_FOUND', `Session not found: ${sessionKey}`, {
            data: { sessionKey },
          });
        }
        const approvalsCleared = settings.approvals ? await settings.approvals.clearSession(sessionKey) : 0;
        ctx.events.emit('session:reset', {
          sessionKey,
          messages: cleared.previousMessageCount,
          approvalsCleared,
        });
        return { sessionKey, reset: true as const, previousMessageCount: cleared.previousMessageCount };
      }),
    resetConversation: (sessionKey, resetOptions = {}) =>
      ctx.locks.run(sessionKey, async () => {
        ctx.forgetSession(sessionKey);
        const session = await ctx.store.get(sessionKey);
        const cleared = session ? await ctx.store.clearMessages(sessionKey, ctx.now()) : undefined;
        if (settings.approvals && session) await settings.approvals.clearSession(sessionKey);
        const result: ResetConversationResult = {
          sessionKey,
          lcdRowsDeleted: cleared ? cleared.rowsDeleted + (cleared.hadSummary ? 1 : 0) : 0,
          sessionMessagesCleared: cleared?.previousMessageCount ?? 0,
          runtimeSessionDestroyed: true,
        };
        if (resetOptions.memory && settings.memory) {
          result.memoriesDeleted = await deleteMemories(
            session?.agentId ?? DEFAULT_AGENT_ID,
            sessionKey,
            resetOptions.purgeDerived ?? false,
          );
        }
        ctx.events.emit('session:conversation_reset', {
          sessionKey,
          lcdRowsDeleted: result.lcdRowsDeleted,
          sessionMessagesCleared: result.sessionMessagesCleared,
          memoriesDeleted: result.memoriesDeleted ?? 0,
        });
        return result;
      }),
    search: (query, limit = 20, searchOptions = {}) =>
      ctx.store.search(query, limit, searchOptions.keyPrefix),
    compact: (sessionKey) => ctx.locks.run(sessionKey, () => compactSession(ctx, agents, models, sessionKey)),
    note: (sessionKey, content) =>
      ctx.locks.run(sessionKey, async () => {
        const tokens = estimateMessageTokens(toModelMessage({ role: 'user', content, tokens: 0 }));
        const appended = await ctx.store.appendMessage(
          sessionKey,
          { role: 'user', content, tokens },
          ctx.now(),
        );
        // The cached context of the session no longer matches its messages.
        if (appended) ctx.cache.delete(sessionKey);
        return appended;
      }),
  };

  async function deleteMemories(agentId: string, sessionKey: string, purgeDerived: boolean): Promise<number> {
    try {
      return (await settings.memory?.deleteBySession({ agentId, sessionKey, purgeDerived })) ?? 0;
    } catch (error) {
      ctx.logger.warn(
        {
          err: error,
          agentId,
          hint: 'memory entries of the session were kept; delete them with memory.delete',
          errorKind: 'dependency',
        },
        'session memory delete failed',
      );
      return 0;
    }
  }

  return api;
}
