import type { Database, Queryable } from '@agentd/storage';
import { keyPrefixMatch } from './sql-fragments.js';

/**
 * One summary node of a session's context DAG. A depth-1 node summarises the messages
 * `fromSeq..toSeq`; a node of depth d > 1 summarises the depth d-1 nodes whose `parentId` is
 * its id. A node without a parent is a root: the roots, oldest first, are the highest
 * summaries of everything compacted.
 */
export interface ContextNode {
  id: number;
  depth: number;
  content: string;
  tokens: number;
  fromSeq: number;
  toSeq: number;
  parentId: number | undefined;
  createdAt: number;
}

interface NodeRow {
  id: number;
  depth: number;
  content: string;
  tokens: number;
  from_seq: number;
  to_seq: number;
  parent_id: number | null;
  created_at: number;
}

function toNode(row: NodeRow): ContextNode {
  return {
    id: row.id,
    depth: row.depth,
    content: row.content,
    tokens: row.tokens,
    fromSeq: row.from_seq,
    toSeq: row.to_seq,
    parentId: row.parent_id ?? undefined,
    createdAt: row.created_at,
  };
}

/** A conversation as `context.conversations` lists it. */
export interface ConversationSummary {
  conversationId: string;
  agentId: string;
  channelType: string;
  messageCount: number;
  nodeCount: number;
  maxDepth: number;
  createdAt: number;
  updatedAt: number;
}

/** The context DAG's summary nodes on libsql (`agent_context_nodes`). */
export class ContextDagStore {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  /** Adds a node; with `children`, they become its children (they must be roots of the session). */
  async insert(
    sessionId: number,
    node: Omit<ContextNode, 'id' | 'parentId'>,
    children: readonly number[] = [],
  ): Promise<number> {
    return this.#db.transaction(async (tx) => {
      const row = await tx.get<{ id: number }>(
        `INSERT INTO agent_context_nodes (session_id, depth, content, tokens, from_seq, to_seq, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`,
        [sessionId, node.depth, node.content, node.tokens, node.fromSeq, node.toSeq, node.createdAt],
      );
      if (!row) throw new Error('context node insert returned no row');
      for (const child of children) {
        await tx.execute(
          'UPDATE agent_context_nodes SET parent_id = ? WHERE id = ? AND session_id = ? AND parent_id IS NULL',
          [row.id, child, sessionId],
        );
      }
      return row.id;
    });
  }

  /** The roots (nodes without a parent) of a session, oldest range first; only `depth`'s when given. */
  async roots(sessionId: number, depth?: number, queryable: Queryable = this.#db): Promise<ContextNode[]> {
    const rows = await queryable.query<NodeRow>(
      `SELECT * FROM agent_context_nodes WHERE session_id = ? AND parent_id IS NULL AND (CAST(? AS INTEGER) IS NULL OR depth = ?)
       ORDER BY from_seq`,
      [sessionId, depth ?? null, depth ?? null],
    );
    return rows.map(toNode);
  }

  /** Every node of a session, oldest range first, shallowest first within a range. */
  async nodes(sessionId: number): Promise<ContextNode[]> {
    const rows = await this.#db.query<NodeRow>(
      'SELECT * FROM agent_context_nodes WHERE session_id = ? ORDER BY from_seq, depth',
      [sessionId],
    );
    return rows.map(toNode);
  }

  /** Estimated tokens of a session's messages from `fromSeq` on (its uncompacted history). */
  async liveTokens(sessionId: number, fromSeq: number): Promise<number> {
    const row = await this.#db.get<{ tokens: number | null }>(
      'SELECT SUM(tokens) AS tokens FROM agent_messages WHERE session_id = ? AND seq >= ?',
      [sessionId, fromSeq],
    );
    return row?.tokens ?? 0;
  }

  /** Removes every node of a session (its messages were cleared). */
  async clear(sessionId: number, queryable: Queryable = this.#db): Promise<void> {
    await queryable.execute('DELETE FROM agent_context_nodes WHERE session_id = ?', [sessionId]);
  }

  /** Conversations of `agentId` (keys starting with `keyPrefix` when given), most recent first, with their DAG sizes. */
  async conversations(filter: {
    agentId: string;
    keyPrefix: string | undefined;
    limit: number;
    offset: number;
  }): Promise<{ conversations: ConversationSummary[]; total: number }> {
    const prefix = filter.keyPrefix ?? null;
    const where = `s.agent_id = ? AND ${keyPrefixMatch('s.session_key')}`;
    const args = [filter.agentId, prefix, prefix, prefix];
    const rows = await this.#db.query<{
      session_key: string;
      agent_id: string;
      channel_type: string;
      message_count: number;
      created_at: number;
      updated_at: number;
      nodes: number;
      max_depth: number | null;
    }>(
      `SELECT s.session_key, s.agent_id, s.channel_type, s.message_count, s.created_at, s.updated_at,
         COUNT(n.id) AS nodes, MAX(n.depth) AS max_depth
       FROM agent_sessions s LEFT JOIN agent_context_nodes n ON n.session_id = s.id
       WHERE ${where} GROUP BY s.id ORDER BY s.updated_at DESC, s.id DESC LIMIT ? OFFSET ?`,
      [...args, filter.limit, filter.offset],
    );
    const total = await this.#db.get<{ n: number }>(
      `SELECT COUNT(*) AS n FROM agent_sessions s WHERE ${where}`,
      args,
    );
    return {
      total: total?.n ?? 0,
      conversations: rows.map((row) => ({
        conversationId: row.session_key,
        agentId: row.agent_id,
        channelType: row.channel_type,
        messageCount: row.message_count,
        nodeCount: row.nodes,
        maxDepth: row.max_depth ?? 0,
        createdAt: row.created_at,
        updatedAt: row.updated_at,
      })),
    };
  }
}
