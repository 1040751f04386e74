import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Database, openDatabase } from '@agentd/storage';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { agentRuntimeMigrations, MIGRATION_PACKAGE } from './migrations.js';
import { contextDagByAgent } from './session-stats.js';

let dir: string;
let db: Database;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'session-stats-'));
  db = await openDatabase({ dataDir: dir });
  await db.migrate(MIGRATION_PACKAGE, agentRuntimeMigrations);
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
        nodes: { sessions: 1, messages: 3 },
        maxDepth: 0,
        compactions: { compactedSessions: 0, summaryTokens: 0 },
      },
      {
        agentId: 'writer',
        nodes: { sessions: 2, messages: 14 },
        maxDepth: 1,
        compactions: { compactedSessions: 1, summaryTokens: 120 },
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
