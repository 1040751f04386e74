import type { Database, Queryable, SqlValue } from '@agentd/storage';
import type { ModelToolCall, ModelUsage } from './provider.js';
import { PG_SESSION_SEARCH } from './session-search.pg.js';
import { keyPrefixMatch } from './sql-fragments.js';
import type { EndReason, FinishReason } from './types.js';

/** Kind of a session, from the origin of its first turn. */
export type SessionKind = 'main' | 'subagent' | 'hook' | 'cron' | 'graph';

/** One stored message (the shape `session.history` and `session.export` return). */
export interface SessionMessage {
  /** Position in the session, from 1. */
  seq: number;
  role: 'user' | 'assistant' | 'tool';
  content: string;
  /** Tool calls an assistant message made. */
  toolCalls?: ModelToolCall[];
  /** The call a tool message answers. */
  toolCallId?: string;
  toolName?: string;
  /** True when a tool message reports a failure. */
  isError?: boolean;
  /** Estimated tokens of the message as sent to a model. */
  tokens: number;
  createdAt: number;
  traceId?: string;
}

/** A message about to be stored. */
export type NewMessage = Omit<SessionMessage, 'seq' | 'createdAt'>;

/** One session row. */
export interface SessionRecord {
  id: number;
  sessionKey: string;
  agentId: string;
  channelType: string;
  kind: SessionKind;
  createdAt: number;
  updatedAt: number;
  messageCount: number;
  nextSeq: number;
  /** Messages below this seq are summarised by `summary` and left out of the context. */
  compactedBeforeSeq: number;
  summary: string | undefined;
  summaryTokens: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  costUsd: number;
  turns: number;
  steps: number;
  lastSteps: number;
  lastProvider: string | undefined;
  lastModel: string | undefined;
  metadata: Record<string, unknown>;
}

/** What one turn writes, in one transaction. */
export interface TurnWrite {
  sessionKey: string;
  agentId: string;
  channelType: string;
  kind: SessionKind;
  now: number;
  messages: NewMessage[];
  traceId: string;
  steps: number;
  provider: string;
  model: string;
  usage: ModelUsage;
  costUsd: number;
  cacheSavedUsd: number;
  /** Commits the turn's result under its turn key, in the same transaction as its messages. */
  turnKey?: { key: string; response: string; finishReason: string; endReason: string; steps: number };
}

/** A turn committed under a turn key, as answered when it is asked for again. */
export interface CommittedTurn {
  response: string;
  tokensUsed: { input: number; output: number; total: number };
  finishReason: FinishReason;
  endReason: EndReason;
  steps: number;
  sessionKey: string;
  traceId: string;
}

/** A billing aggregate, as the contract's "Billing aggregate". */
export interface BillingAggregate {
  totalCost: number;
  totalTokens: number;
  callCount: number;
  totalCacheSaved: number;
}

/** A full-text hit, as the contract's "Session search hit". */
export interface SessionSearchHit {
  sessionKey: string;
  agentId: string;
  channelType: string;
  snippet: string;
  score: number;
  timestamp: number;
}

interface SessionRow {
  id: number;
  session_key: string;
  agent_id: string;
  channel_type: string;
  kind: string;
  created_at: number;
  updated_at: number;
  message_count: number;
  next_seq: number;
  compacted_before_seq: number;
  summary: string | null;
  summary_tokens: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cost_usd: number;
  turns: number;
  steps: number;
  last_steps: number;
  last_provider: string | null;
  last_model: string | null;
  metadata: string;
}

interface MessageRow {
  seq: number;
  role: string;
  content: string;
  tool_calls: string | null;
  tool_call_id: string | null;
  tool_name: string | null;
  is_error: number;
  tokens: number;
  created_at: number;
  trace_id: string | null;
}

const MESSAGE_COLUMNS =
  'seq, role, content, tool_calls, tool_call_id, tool_name, is_error, tokens, created_at, trace_id';

function toSession(row: SessionRow): SessionRecord {
  return {
    id: row.id,
    sessionKey: row.session_key,
    agentId: row.agent_id,
    channelType: row.channel_type,
    kind: row.kind as SessionKind,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    messageCount: row.message_count,
    nextSeq: row.next_seq,
    compactedBeforeSeq: row.compacted_before_seq,
    summary: row.summary ?? undefined,
    summaryTokens: row.summary_tokens,
    inputTokens: row.input_tokens,
    outputTokens: row.output_tokens,
    cacheReadTokens: row.cache_read_tokens,
    cacheWriteTokens: row.cache_write_tokens,
    costUsd: row.cost_usd,
    turns: row.turns,
    steps: row.steps,
    lastSteps: row.last_steps,
    lastProvider: row.last_provider ?? undefined,
    lastModel: row.last_model ?? undefined,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
  };
}

function toMessage(row: MessageRow): SessionMessage {
  const message: SessionMessage = {
    seq: row.seq,
    role: row.role as SessionMessage['role'],
    content: row.content,
    tokens: row.tokens,
    createdAt: row.created_at,
  };
  if (row.tool_calls) message.toolCalls = JSON.parse(row.tool_calls) as ModelToolCall[];
  if (row.tool_call_id) message.toolCallId = row.tool_call_id;
  if (row.tool_name) message.toolName = row.tool_name;
  if (row.is_error) message.isError = true;
  if (row.trace_id) message.traceId = row.trace_id;
  return message;
}

/** The words of a search (letters, digits, underscores), at most 32; none gives `undefined`. */
function searchWords(text: string): string[] | undefined {
  const words = text.match(/[\p{L}\p{N}_]+/gu);
  if (!words || words.length === 0) return undefined;
  return words.slice(0, 32);
}

/** The words as an FTS5 query: every word quoted, all required. */
function toMatchQuery(words: string[]): string {
  return words.map((word) => `"${word}"`).join(' ');
}

/**
 * Sessions, messages and billing on libsql or PostgreSQL. Every method is one statement or one
 * transaction; only the search differs by dialect (session-search.pg.ts).
 */
export class SessionStore {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  /** The session of that key, or `undefined`. */
  async get(sessionKey: string, queryable: Queryable = this.#db): Promise<SessionRecord | undefined> {
    const row = await queryable.get<SessionRow>('SELECT * FROM agent_sessions WHERE session_key = ?', [
      sessionKey,
    ]);
    return row ? toSession(row) : undefined;
  }

  /** Up to `limit` context messages older than `beforeSeq`, newest first (compacted ones excluded). */
  async loadTail(session: SessionRecord, beforeSeq: number, limit: number): Promise<SessionMessage[]> {
    const rows = await this.#db.query<MessageRow>(
      `SELECT ${MESSAGE_COLUMNS} FROM agent_messages
       WHERE session_id = ? AND seq < ? AND seq >= ? ORDER BY seq DESC LIMIT ?`,
      [session.id, beforeSeq, session.compactedBeforeSeq, limit],
    );
    return rows.map(toMessage);
  }

  /** Writes one turn: the session (created on first use), its messages, counters and billing. */
  async commitTurn(write: TurnWrite): Promise<SessionRecord> {
    return this.#db.transaction(async (tx) => {
      const inserted = await tx.get<{ id: number; next_seq: number }>(
        `INSERT INTO agent_sessions (session_key, agent_id, channel_type, kind, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (session_key) DO UPDATE SET updated_at = excluded.updated_at
         RETURNING id, next_seq`,
        [write.sessionKey, write.agentId, write.channelType, write.kind, write.now, write.now],
      );
      if (!inserted) throw new Error('session upsert returned no row');
      const count = write.messages.length;
      if (count > 0) {
        const valueTuples: string[] = [];
        const args: SqlValue[] = [];
        write.messages.forEach((message, index) => {
          valueTuples.push('(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
          args.push(
            inserted.id,
            inserted.next_seq + index,
            message.role,
            message.content,
            message.toolCalls ? JSON.stringify(message.toolCalls) : null,
            message.toolCallId ?? null,
            message.toolName ?? null,
            message.isError ? 1 : 0,
            message.tokens,
            write.now,
            write.traceId,
          );
        });
        await tx.execute(
          `INSERT INTO agent_messages (session_id, seq, role, content, tool_calls, tool_call_id, tool_name, is_error,
             tokens, created_at, trace_id) VALUES ${valueTuples.join(', ')}`,
          args,
        );
      }
      const { usage } = write;
      const row = await tx.get<SessionRow>(
        `UPDATE agent_sessions SET next_seq = next_seq + ?, message_count = message_count + ?, updated_at = ?,
           input_tokens = input_tokens + ?, output_tokens = output_tokens + ?,
           cache_read_tokens = cache_read_tokens + ?, cache_write_tokens = cache_write_tokens + ?,
           cost_usd = cost_usd + ?, turns = turns + 1, steps = steps + ?, last_steps = ?,
           last_provider = ?, last_model = ?
         WHERE id = ? RETURNING *`,
        [
          count,
          count,
          write.now,
          usage.inputTokens,
          usage.outputTokens,
          usage.cacheReadTokens,
          usage.cacheWriteTokens,
          write.costUsd,
          write.steps,
          write.steps,
          write.provider,
          write.model,
          inserted.id,
        ],
      );
      if (write.steps > 0) await insertBilling(tx, write);
      if (write.turnKey) await insertTurnKey(tx, write, write.turnKey);
      if (!row) throw new Error('session update returned no row');
      return toSession(row);
    });
  }

  /** The turn committed under `turnKey`, if any. */
  async committedTurn(turnKey: string): Promise<CommittedTurn | undefined> {
    const row = await this.#db.get<{
      session_key: string;
      response: string;
      finish_reason: string;
      end_reason: string;
      steps: number;
      trace_id: string;
      input_tokens: number;
      output_tokens: number;
    }>('SELECT * FROM agent_turn_keys WHERE turn_key = ?', [turnKey]);
    if (!row) return undefined;
    const input = Number(row.input_tokens);
    const output = Number(row.output_tokens);
    return {
      response: row.response,
      tokensUsed: { input, output, total: input + output },
      finishReason: row.finish_reason as FinishReason,
      endReason: row.end_reason as EndReason,
      steps: Number(row.steps),
      sessionKey: row.session_key,
      traceId: row.trace_id,
    };
  }

  /** Records the billing of a call outside a turn (compaction). */
  async recordBilling(write: Omit<TurnWrite, 'messages' | 'channelType' | 'kind'>): Promise<void> {
    await insertBilling(this.#db, write);
  }

  /** Messages of a session in order; `limit` newest before `beforeTs` when given. */
  async history(
    session: SessionRecord,
    options: { limit?: number | undefined; beforeTs?: number | undefined } = {},
  ): Promise<SessionMessage[]> {
    const rows = await this.#db.query<MessageRow>(
      `SELECT ${MESSAGE_COLUMNS} FROM agent_messages WHERE session_id = ? AND created_at < ?
       ORDER BY seq DESC LIMIT ?`,
      [session.id, options.beforeTs ?? Number.MAX_SAFE_INTEGER, options.limit ?? Number.MAX_SAFE_INTEGER],
    );
    return rows.map(toMessage).reverse();
  }

  /** Sessions, most recently active first. */
  async list(options: {
    sinceMs?: number | undefined;
    kind?: SessionKind | undefined;
    keyPrefix?: string | undefined;
    limit: number;
  }): Promise<SessionRecord[]> {
    const prefix = options.keyPrefix ?? null;
    const rows = await this.#db.query<SessionRow>(
      `SELECT * FROM agent_sessions WHERE updated_at >= ? AND (CAST(? AS TEXT) IS NULL OR kind = ?)
         AND ${keyPrefixMatch('session_key')}
       ORDER BY updated_at DESC LIMIT ?`,
      [
        options.sinceMs ?? 0,
        options.kind ?? null,
        options.kind ?? null,
        prefix,
        prefix,
        prefix,
        options.limit,
      ],
    );
    return rows.map(toSession);
  }

  /** Deletes a session and its messages; returns what was there. */
  async delete(
    sessionKey: string,
  ): Promise<{ session: SessionRecord; messages: SessionMessage[] } | undefined> {
    return this.#db.transaction(async (tx) => {
      const session = await this.get(sessionKey, tx);
      if (!session) return undefined;
      const rows = await tx.query<MessageRow>(
        `SELECT ${MESSAGE_COLUMNS} FROM agent_messages WHERE session_id = ? ORDER BY seq`,
        [session.id],
      );
      await tx.execute('DELETE FROM agent_sessions WHERE id = ?', [session.id]);
      // A turn key keeps the turn's answer; it goes with the transcript.
      await tx.execute('DELETE FROM agent_turn_keys WHERE session_key = ?', [sessionKey]);
      return { session, messages: rows.map(toMessage) };
    });
  }

  /**
   * Deletes every message of a session and its summary, keeping the session row and
   * counters. Returns the rows deleted and the messages the session counted.
   */
  async clearMessages(
    sessionKey: string,
    now: number,
  ): Promise<{ rowsDeleted: number; previousMessageCount: number; hadSummary: boolean } | undefined> {
    return this.#db.transaction(async (tx) => {
      const session = await this.get(sessionKey, tx);
      if (!session) return undefined;
      const deleted = await tx.execute('DELETE FROM agent_messages WHERE session_id = ?', [session.id]);
      // The context DAG summarises those messages: it goes with them.
      await tx.execute('DELETE FROM agent_context_nodes WHERE session_id = ?', [session.id]);
      await tx.execute('DELETE FROM agent_turn_keys WHERE session_key = ?', [sessionKey]);
      await tx.execute(
        `UPDATE agent_sessions SET message_count = 0, summary = NULL, summary_tokens = 0,
           compacted_before_seq = next_seq, updated_at = ? WHERE id = ?`,
        [now, session.id],
      );
      return {
        rowsDeleted: deleted.rowsAffected,
        previousMessageCount: session.messageCount,
        hadSummary: session.summary !== undefined,
      };
    });
  }

  /**
   * Appends one message to an existing session outside a turn (no turn, step or billing is
   * counted). Answers false when the session does not exist.
   */
  async appendMessage(sessionKey: string, message: NewMessage, now: number): Promise<boolean> {
    return this.#db.transaction(async (tx) => {
      const session = await this.get(sessionKey, tx);
      if (!session) return false;
      await tx.execute(
        `INSERT INTO agent_messages (session_id, seq, role, content, tool_calls, tool_call_id, tool_name, is_error,
           tokens, created_at, trace_id) VALUES (?, ?, ?, ?, NULL, NULL, NULL, 0, ?, ?, NULL)`,
        [session.id, session.nextSeq, message.role, message.content, message.tokens, now],
      );
      await tx.execute(
        `UPDATE agent_sessions SET next_seq = next_seq + 1, message_count = message_count + 1, updated_at = ?
         WHERE id = ?`,
        [now, session.id],
      );
      return true;
    });
  }

  /** Stores a compaction summary covering every message below `beforeSeq`. */
  async compact(sessionId: number, beforeSeq: number, summary: string, summaryTokens: number, now: number) {
    await this.#db.execute(
      `UPDATE agent_sessions SET summary = ?, summary_tokens = ?, compacted_before_seq = ?, updated_at = ?
       WHERE id = ?`,
      [summary, summaryTokens, beforeSeq, now, sessionId],
    );
  }

  /** Full-text search over user and assistant messages; the best hit per session, best first. */
  async search(query: string, limit: number, keyPrefix?: string): Promise<SessionSearchHit[]> {
    const words = searchWords(query);
    if (!words) return [];
    const pg = this.#db.dialect === 'pg';
    const rows = await this.#db.query<{
      session_key: string;
      agent_id: string;
      channel_type: string;
      snippet: string;
      rank: number;
      created_at: number;
    }>(
      pg
        ? PG_SESSION_SEARCH
        : `SELECT s.session_key, s.agent_id, s.channel_type, m.created_at,
         snippet(agent_messages_fts, 0, '[', ']', '…', 16) AS snippet, bm25(agent_messages_fts) AS rank
       FROM agent_messages_fts
       JOIN agent_messages m ON m.id = agent_messages_fts.rowid
       JOIN agent_sessions s ON s.id = m.session_id
       WHERE agent_messages_fts MATCH ? AND ${keyPrefixMatch('s.session_key')}
       ORDER BY rank LIMIT ?`,
      [
        pg ? words.join(' ') : toMatchQuery(words),
        keyPrefix ?? null,
        keyPrefix ?? null,
        keyPrefix ?? null,
        Math.min(limit * 10, 5000),
      ],
    );
    const seen = new Set<string>();
    const hits: SessionSearchHit[] = [];
    for (const row of rows) {
      if (seen.has(row.session_key)) continue;
      seen.add(row.session_key);
      // bm25 is lower-is-better and negative for matches; flip it so higher means better
      // (PostgreSQL's ts_rank_cd is already higher-is-better).
      hits.push({
        sessionKey: row.session_key,
        agentId: row.agent_id,
        channelType: row.channel_type,
        snippet: row.snippet,
        score: Math.round((pg ? row.rank : -row.rank) * 1e6) / 1e6,
        timestamp: row.created_at,
      });
      if (hits.length >= limit) break;
    }
    return hits;
  }

  /** Billing aggregate over rows matching the filter since `sinceMs`. */
  async billingAggregate(filter: {
    sinceMs?: number | undefined;
    agentId?: string | undefined;
    sessionKey?: string | undefined;
  }): Promise<BillingAggregate> {
    const row = await this.#db.get<{
      cost: number | null;
      tokens: number | null;
      calls: number | null;
      saved: number | null;
    }>(
      `SELECT SUM(cost_usd) AS cost, SUM(input_tokens + output_tokens) AS tokens, SUM(calls) AS calls,
         SUM(cache_saved_usd) AS saved
       FROM agent_billing WHERE ts >= ? AND (CAST(? AS TEXT) IS NULL OR agent_id = ?)
         AND (CAST(? AS TEXT) IS NULL OR session_key = ?)`,
      [
        filter.sinceMs ?? 0,
        filter.agentId ?? null,
        filter.agentId ?? null,
        filter.sessionKey ?? null,
        filter.sessionKey ?? null,
      ],
    );
    return {
      totalCost: roundUsd(row?.cost ?? 0),
      totalTokens: row?.tokens ?? 0,
      callCount: row?.calls ?? 0,
      totalCacheSaved: roundUsd(row?.saved ?? 0),
    };
  }

  /** Billing per provider since `sinceMs`. */
  async billingByProvider(sinceMs: number | undefined) {
    const rows = await this.#db.query<{ provider: string; input: number; output: number; cost: number }>(
      `SELECT provider, SUM(input_tokens) AS input, SUM(output_tokens) AS output, SUM(cost_usd) AS cost
       FROM agent_billing WHERE ts >= ? GROUP BY provider ORDER BY provider`,
      [sinceMs ?? 0],
    );
    return rows.map((row) => ({
      provider: row.provider,
      inputTokens: row.input,
      outputTokens: row.output,
      estimatedCostUsd: roundUsd(row.cost),
    }));
  }

  /** Tokens per hour bucket since `sinceMs` (bucket = floor(ts / 1 h)). */
  async billingHourly(sinceMs: number): Promise<Map<number, number>> {
    const rows = await this.#db.query<{ bucket: number; tokens: number }>(
      `SELECT ts / 3600000 AS bucket, SUM(input_tokens + output_tokens) AS tokens
       FROM agent_billing WHERE ts >= ? GROUP BY bucket`,
      [sinceMs],
    );
    return new Map(rows.map((row) => [Math.floor(row.bucket), row.tokens]));
  }

  /** Prompt-cache figures from billing rows, of one agent or all. */
  async cacheStats(agentId: string | undefined) {
    const row = await this.#db.get<{
      hits: number | null;
      calls: number | null;
      input: number | null;
      read: number | null;
      written: number | null;
      saved: number | null;
    }>(
      `SELECT SUM(CASE WHEN cache_read_tokens > 0 THEN 1 ELSE 0 END) AS hits, COUNT(*) AS calls,
         SUM(input_tokens) AS input, SUM(cache_read_tokens) AS read, SUM(cache_write_tokens) AS written,
         SUM(cache_saved_usd) AS saved
       FROM agent_billing WHERE (CAST(? AS TEXT) IS NULL OR agent_id = ?)`,
      [agentId ?? null, agentId ?? null],
    );
    const hits = row?.hits ?? 0;
    const calls = row?.calls ?? 0;
    return {
      hits,
      misses: calls - hits,
      hitRate: calls === 0 ? 0 : Math.round((hits / calls) * 10_000) / 10_000,
      inputTokens: row?.input ?? 0,
      cacheReadTokens: row?.read ?? 0,
      cacheWriteTokens: row?.written ?? 0,
      estimatedSavingsUsd: roundUsd(row?.saved ?? 0),
    };
  }
}

async function insertBilling(
  queryable: Queryable,
  write: Omit<TurnWrite, 'messages' | 'channelType' | 'kind'>,
): Promise<void> {
  await queryable.execute(
    `INSERT INTO agent_billing (ts, agent_id, session_key, provider, model, input_tokens, output_tokens,
       cache_read_tokens, cache_write_tokens, cost_usd, cache_saved_usd, calls, trace_id)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      write.now,
      write.agentId,
      write.sessionKey,
      write.provider,
      write.model,
      write.usage.inputTokens,
      write.usage.outputTokens,
      write.usage.cacheReadTokens,
      write.usage.cacheWriteTokens,
      write.costUsd,
      write.cacheSavedUsd,
      write.steps,
      write.traceId,
    ],
  );
}

/** Rounds dollars to 1e-9 so float noise does not show in aggregates. */
export function roundUsd(value: number): number {
  return Math.round(value * 1e9) / 1e9;
}

async function insertTurnKey(
  tx: Queryable,
  write: TurnWrite,
  turnKey: NonNullable<TurnWrite['turnKey']>,
): Promise<void> {
  await tx.execute(
    `INSERT INTO agent_turn_keys (turn_key, session_key, response, finish_reason, end_reason, steps, trace_id,
       input_tokens, output_tokens, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (turn_key) DO NOTHING`,
    [
      turnKey.key,
      write.sessionKey,
      turnKey.response,
      turnKey.finishReason,
      turnKey.endReason,
      turnKey.steps,
      write.traceId,
      write.usage.inputTokens,
      write.usage.outputTokens,
      write.now,
    ],
  );
}
