/**
 * Agent turns per second through the offline provider with zero model latency, at
 * session history sizes of 10, 1,000 and 10,000 messages: the daemon's own overhead per
 * turn (session load, context assembly, one write transaction, trajectory and
 * session-index evidence). The baseline is the offline provider call alone, so the
 * difference of the two per-turn times is the runtime's overhead.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Database, openDatabase } from '@agentd/storage';
import { interleave, printComparison, printFigure } from '../../../tooling/bench/harness.js';
import { createAgentRuntime, createOfflineProvider, estimateMessageTokens } from '../src/index.js';
import { chatRequest } from '../test/requests.js';

const SIZES = [10, 1000, 10_000];
const dir = mkdtempSync(join(tmpdir(), 'agentd-bench-runtime-'));
const db: Database = await openDatabase({ dataDir: dir });
const runtime = createAgentRuntime({ db, dataDir: dir });
await runtime.start();
// The same turns with the in-memory session tail disabled: every turn reads its history from libsql.
const uncachedRuntime = createAgentRuntime({ db, dataDir: dir, sessionCacheSize: 0 });

/** Writes `count` alternating user/assistant messages into a fresh session, in one transaction. */
async function fill(sessionKey: string, count: number): Promise<void> {
  const at = Date.now();
  await db.transaction(async (tx) => {
    const session = await tx.get<{ id: number }>(
      `INSERT INTO agent_sessions (session_key, agent_id, channel_type, kind, created_at, updated_at, message_count, next_seq)
       VALUES (?, 'default', 'webchat', 'main', ?, ?, ?, ?) RETURNING id`,
      [sessionKey, at, at, count, count + 1],
    );
    for (let seq = 1; seq <= count; seq++) {
      const role = seq % 2 === 1 ? 'user' : 'assistant';
      const content =
        role === 'user' ? `question number ${seq} about the benchmark` : `answer number ${seq}, offline`;
      await tx.execute(
        'INSERT INTO agent_messages (session_id, seq, role, content, tokens, created_at) VALUES (?, ?, ?, ?, ?, ?)',
        [session?.id ?? 0, seq, role, content, estimateMessageTokens({ role, content }), at],
      );
    }
  });
}

for (const size of SIZES) await fill(`bench:history:${size}`, size);
await fill('bench:uncached:1000', 1000);

const provider = createOfflineProvider();
const providerOnly = async (ms: number): Promise<number> => {
  const end = performance.now() + ms;
  let ops = 0;
  const request = chatRequest('a benchmark message', { system: 'You are a helpful assistant.' });
  while (performance.now() < end) {
    for await (const _event of provider.stream(request)) {
      // drain
    }
    ops++;
  }
  return ops;
};

const turns =
  (size: number) =>
  async (ms: number): Promise<number> => {
    const end = performance.now() + ms;
    let ops = 0;
    while (performance.now() < end) {
      await runtime.runTurn({ message: `a benchmark message ${ops}`, sessionKey: `bench:history:${size}` });
      ops++;
    }
    return ops;
  };

const rows = await interleave(
  [
    { name: 'offline provider call only (baseline)', runFor: providerOnly },
    ...SIZES.map((size) => ({
      name: `agent turn, history ${size.toLocaleString('en')}`,
      runFor: turns(size),
    })),
    {
      name: 'agent turn, history 1,000, no session cache',
      runFor: async (ms: number) => {
        const end = performance.now() + ms;
        let ops = 0;
        while (performance.now() < end) {
          await uncachedRuntime.runTurn({
            message: `a benchmark message ${ops}`,
            sessionKey: 'bench:uncached:1000',
          });
          ops++;
        }
        return ops;
      },
    },
  ],
  { warmupMs: 500, durationMs: 1500, rounds: 3 },
);
printComparison('Agent turns per second (offline provider, zero model latency)', rows);

const baseline = rows[0];
console.log('\nRuntime overhead per turn (turn time minus provider call time)');
for (const row of rows.slice(1)) {
  const overheadMs = 1000 / row.opsPerSec - (baseline ? 1000 / baseline.opsPerSec : 0);
  printFigure(row.name, overheadMs, 'ms', row.name.endsWith('1,000') ? { below: 5 } : undefined);
}

await runtime.close();
await uncachedRuntime.close();
await db.close();
rmSync(dir, { recursive: true, force: true });
