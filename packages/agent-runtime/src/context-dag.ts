import type { ContextNode, ConversationSummary } from './context-dag-store.js';
import { AgentRuntimeError } from './errors.js';
import type { RuntimeContext } from './runtime-context.js';
import type { SessionMessage } from './session-store.js';

/** Characters of a node's preview. */
export const NODE_PREVIEW_CHARS = 200;
/** Most messages a tree shows as leaves (the newest); summaries are always all shown. */
export const MAX_TREE_MESSAGES = 5000;

/** One node of `context.tree`: a message (depth 0) or a summary (depth 1 and up). */
export interface ContextTreeNode {
  id: string;
  kind: 'message' | 'summary';
  depth: number;
  tokenCount: number;
  preview: string;
  childIds: string[];
  parentIds: string[];
  createdAt: number;
  /** Message range the node covers (a message: its own seq). */
  fromSeq: number;
  toSeq: number;
  /** A message's role. */
  role?: SessionMessage['role'];
}

/** `context.tree`'s answer. */
export interface ContextTree {
  conversationId: string;
  agentId: string;
  maxDepth: number;
  /** Roots: the highest summaries, then the messages no summary covers (the fresh tail). */
  rootIds: string[];
  nodes: ContextTreeNode[];
  /** True when older messages were left out past {@link MAX_TREE_MESSAGES}. */
  truncated: boolean;
}

/** The context-DAG browser over the session store (what `context.*` serves). */
export interface ContextDagApi {
  /** The agent's conversations (keys starting with `keyPrefix`), most recent first, with message and node counts. */
  conversations(filter: {
    agentId: string;
    keyPrefix?: string | undefined;
    limit?: number | undefined;
    offset?: number | undefined;
  }): Promise<{ conversations: ConversationSummary[]; total: number }>;
  /**
   * The DAG of one conversation of `agentId`. Another agent's conversation, or one `visible`
   * refuses, is answered as absent.
   * @throws {AgentRuntimeError} `SESSION_NOT_FOUND`
   */
  tree(request: {
    agentId: string;
    conversationId: string;
    visible?: (sessionKey: string) => boolean;
  }): Promise<ContextTree>;
}

const preview = (text: string) => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > NODE_PREVIEW_CHARS ? flat.slice(0, NODE_PREVIEW_CHARS) : flat;
};
const summaryId = (node: ContextNode) => `summary:${node.id}`;
const messageId = (seq: number) => `message:${seq}`;

/** Creates the context-DAG API over the runtime's stores. */
export function createContextDagApi(ctx: RuntimeContext): ContextDagApi {
  return {
    conversations: (filter) =>
      ctx.dag.conversations({
        agentId: filter.agentId,
        keyPrefix: filter.keyPrefix,
        limit: filter.limit ?? 50,
        offset: filter.offset ?? 0,
      }),
    async tree({ agentId, conversationId, visible }) {
      const session = await ctx.store.get(conversationId);
      if (!session || session.agentId !== agentId || (visible && !visible(conversationId))) {
        throw new AgentRuntimeError('SESSION_NOT_FOUND', `Conversation not found: ${conversationId}`, {
          data: { sessionKey: conversationId },
        });
      }
      const summaries = await ctx.dag.nodes(session.id);
      const messages = (await ctx.store.history(session, { limit: MAX_TREE_MESSAGES })) as SessionMessage[];
      const nodes = new Map<string, ContextTreeNode>();
      for (const message of messages) {
        nodes.set(messageId(message.seq), {
          id: messageId(message.seq),
          kind: 'message',
          depth: 0,
          tokenCount: message.tokens,
          preview: preview(message.content),
          childIds: [],
          parentIds: [],
          createdAt: message.createdAt,
          fromSeq: message.seq,
          toSeq: message.seq,
          role: message.role,
        });
      }
      for (const node of summaries) {
        nodes.set(summaryId(node), {
          id: summaryId(node),
          kind: 'summary',
          depth: node.depth,
          tokenCount: node.tokens,
          preview: preview(node.content),
          childIds: [],
          parentIds: node.parentId === undefined ? [] : [`summary:${node.parentId}`],
          createdAt: node.createdAt,
          fromSeq: node.fromSeq,
          toSeq: node.toSeq,
        });
      }
      for (const node of summaries) {
        const entry = nodes.get(summaryId(node)) as ContextTreeNode;
        if (node.parentId !== undefined) nodes.get(`summary:${node.parentId}`)?.childIds.push(entry.id);
        if (node.depth !== 1) continue;
        // A depth-1 summary's children are the messages of its range.
        for (let seq = node.fromSeq; seq <= node.toSeq; seq++) {
          const message = nodes.get(messageId(seq));
          if (!message) continue;
          entry.childIds.push(message.id);
          message.parentIds.push(entry.id);
        }
      }
      const list = [...nodes.values()];
      return {
        conversationId,
        agentId: session.agentId,
        maxDepth: Math.max(0, ...summaries.map((node) => node.depth)),
        rootIds: list.filter((node) => node.parentIds.length === 0).map((node) => node.id),
        nodes: list,
        truncated: session.messageCount > messages.length,
      };
    },
  };
}
