import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database } from '@agentd/storage';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openTestDatabase, testDialects } from '@agentd/storage/testing';
import { agentRuntimeMigrationSet, MIGRATION_PACKAGE } from './migrations.js';
import { contextDagByAgent } from './session-stats.js';

// Every test runs on both dialects (PostgreSQL when the test server is set).
describe.each(testDialects())('session stats on %s', (dialect) => {
  let dir: string;
  let db: Database;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'session-stats-'));
    db = await openTestDatabase(dialect, dir);
    await db.migrate(MIGRATION_PACKAGE, agentRuntimeMigrationSet);
  });

  afterEach(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function session(
    key: string,
    agentId: string,
    messages: number,
    compactedBeforeSeq = 0,
    summaryTokens = 0,
  ) {
    await db.execute(
      `INSERT INTO agent_sessions (session_key, agent_id, channel_type, kind, created_at, updated_at,
       message_count, compacted_before_seq, summary_tokens) VALUES (?, ?, 'rpc', 'main', 1, 1, ?, ?, ?)`,
      [key, agentId, messages, compactedBeforeSeq, summaryTokens],
    );
  }

  describe('contextDagByAgent', () => {
    it('counts sessions, messages and compactions per agent, ordered by agent id', async () => {
      await session('a:1', 'writer', 10, 6, 120);
      await session('a:2', 'writer', 4);
      await session('b:1', 'coder', 3);
      expect(await contextDagByAgent(db)).toEqual([
        {
          agentId: 'coder',
          nodes: { sessions: 1, messages: 3, summaries: 0 },
          maxDepth: 0,
          nodesByDepth: {},
          compactions: { compactedSessions: 0, summaryTokens: 0 },
        },
        {
          agentId: 'writer',
          nodes: { sessions: 2, messages: 14, summaries: 0 },
          maxDepth: 1,
          nodesByDepth: {},
          compactions: { compactedSessions: 1, summaryTokens: 120 },
        },
      ]);
    });

    it('reports summary nodes per depth, the deepest level and the newest compaction', async () => {
      await session('a:1', 'writer', 40, 30, 50);
      const node = (depth: number, parent: number | null, createdAt: number) =>
        db.execute(
          `INSERT INTO agent_context_nodes (session_id, depth, content, tokens, from_seq, to_seq, parent_id, created_at)
         VALUES (1, ?, 's', 1, 1, 2, ?, ?)`,
          [depth, parent, createdAt],
        );
      await node(2, null, 50);
      for (const at of [10, 20]) await node(1, 1, at);
      expect(await contextDagByAgent(db, 'writer')).toEqual([
        {
          agentId: 'writer',
          nodes: { sessions: 1, messages: 40, summaries: 3 },
          maxDepth: 2,
          nodesByDepth: { '1': 2, '2': 1 },
          compactions: { compactedSessions: 1, summaryTokens: 50, lastAt: 50 },
        },
      ]);
    });

    it("answers only the named agent's row, and nothing for an agent without sessions", async () => {
      await session('a:1', 'writer', 2);
      await session('b:1', 'coder', 3);
      expect((await contextDagByAgent(db, 'coder')).map((row) => row.agentId)).toEqual(['coder']);
      expect(await contextDagByAgent(db, 'ghost')).toEqual([]);
    });
  });
});
