/**
 * channels benchmarks, each beside its baseline in the same run:
 *
 *   npx -y pnpm@10 bench channels      (from the repository root)
 *
 * 1. Throughput: messages/s through the delivery queue (the libsql write, already claimed, before
 *    the attempt, grammy's call to a local fake Bot API, the `sent` record, all group-committed;
 *    each caller waits for its message's record, as the message methods do) against a bare loop
 *    posting the same messages with grammy's `Api` to the same fake server; 8 chats in parallel
 *    in both. Aim: >= 0.8.
 * 2. Latency the queue adds per message: one message at a time, p50 and p99 through the queue
 *    and bare, and their differences.
 *
 * `--smoke` shortens every phase (to check the benchmark runs, not to measure).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '@agentd/storage';
import { Api } from 'grammy';
import { interleave, printComparison, printFigure } from '../../../tooling/bench/harness.js';
import { startFakeTelegram } from '../test/fake-telegram.js';
import { channelsMigrations, channelsSectionSchema, createChannelsService } from '../src/index.js';

const TOKEN = '123:bench-telegram-token-0123456789';
const CHATS = 8;
const smoke = process.argv.includes('--smoke');
const durations = smoke
  ? { warmupMs: 200, durationMs: 300, rounds: 1 }
  : { warmupMs: 1000, durationMs: 2000, rounds: 3 };

/** Runs `send(chat)` in `CHATS` parallel lanes for about `ms`; answers how many completed. */
async function lanes(ms: number, send: (chat: number) => Promise<unknown>): Promise<number> {
  const until = performance.now() + ms;
  let done = 0;
  await Promise.all(
    Array.from({ length: CHATS }, async (_, chat) => {
      while (performance.now() < until) {
        await send(chat);
        done++;
      }
    }),
  );
  return done;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

async function latencies(count: number, send: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let n = 0; n < count; n++) {
    const began = performance.now();
    await send();
    out.push(performance.now() - began);
  }
  return out.sort((a, b) => a - b);
}

const dir = mkdtempSync(join(tmpdir(), 'channels-bench-'));
const fake = await startFakeTelegram({ token: TOKEN });
const db = await openDatabase({ dataDir: dir });
await db.migrate('@agentd/channels', [...channelsMigrations]);
const service = createChannelsService({
  db,
  section: channelsSectionSchema.parse({
    telegram: { enabled: true, botToken: TOKEN, apiBaseUrl: fake.url },
  }),
});
await service.start();
const api = new Api(TOKEN, { apiRoot: fake.url });
try {
  const rows = await interleave(
    [
      {
        name: 'bare grammy loop',
        runFor: (ms) => lanes(ms, (chat) => api.sendMessage(String(chat + 1), 'bench')),
      },
      {
        name: 'delivery queue',
        runFor: (ms) =>
          lanes(ms, (chat) =>
            service.deliver('telegram', { op: 'send', channelId: String(chat + 1), text: 'bench' }),
          ),
      },
    ],
    durations,
  );
  printComparison(`messages/s to a fake Bot API, ${CHATS} chats in parallel`, rows, {
    aims: { 'delivery queue': { above: 0.8 } },
  });

  const count = smoke ? 20 : 500;
  const bare = await latencies(count, () => api.sendMessage('99', 'latency'));
  const queued = await latencies(count, () =>
    service.deliver('telegram', { op: 'send', channelId: '99', text: 'latency' }),
  );
  console.log(`\nlatency per message, one at a time (${count} messages)`);
  printFigure('bare p50', percentile(bare, 50), 'ms');
  printFigure('bare p99', percentile(bare, 99), 'ms');
  printFigure('queue p50', percentile(queued, 50), 'ms');
  printFigure('queue p99', percentile(queued, 99), 'ms');
  printFigure('added by the queue, p50', percentile(queued, 50) - percentile(bare, 50), 'ms');
  printFigure('added by the queue, p99', percentile(queued, 99) - percentile(bare, 99), 'ms');
} finally {
  await service.close();
  await db.close();
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
}
