import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '@agentd/storage';
import { expect, it } from 'vitest';
import { createLearningService } from './learning-service.js';

const TABLES = [
  'learning_outcomes',
  'learning_procedures',
  'learning_memory_stats',
  'learning_sweeps',
  'learning_answers',
];

/**
 * What learning on by default costs a turn: one outcome row (plus one counter row per memory
 * the turn recalled), written off the turn's path, and nothing else; swept rows past the
 * retention are pruned by the sweep, so the table does not grow for ever.
 */
it('writes one row per observed turn, one more per recalled memory, and prunes swept rows', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'learning-cost-'));
  const db = await openDatabase({ dataDir: dir });
  let clock = 0;
  const learning = createLearningService({
    db,
    section: {},
    events: { emit: () => {} },
    runner: {
      runTurn: async () => {
        throw new Error('a turn without corroborated procedures never calls the model');
      },
    },
    canSynthesize: () => true,
    now: () => clock,
  });
  await learning.start();
  expect(learning.enabled).toBe(true);
  const rows = async () => {
    const counts: Record<string, number> = {};
    for (const table of TABLES)
      counts[table] = (await db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`))?.n ?? 0;
    return counts;
  };
  const turns = 200;
  const started = performance.now();
  for (let i = 0; i < turns; i++) {
    if (i % 10 === 0) learning.noteRecall(`s:${i % 7}`, ['m1', 'm2']);
    learning.observeTurn({
      agentId: 'a',
      sessionKey: `s:${i % 7}`,
      traceId: `t${i}`,
      origin: 'rpc',
      message: `do the thing number ${i}`,
      response: 'done',
      endReason: 'completed',
      tools: [{ name: `tool${i}`, ok: true }],
      synthetic: false,
      at: clock,
    });
  }
  await learning.idle();
  const perTurnMs = (performance.now() - started) / turns;
  // Two memories recalled before every tenth turn: two counter rows (upserts), no more.
  expect(await rows()).toEqual({
    learning_outcomes: turns,
    learning_procedures: 0,
    learning_memory_stats: 2,
    learning_sweeps: 0,
    learning_answers: 0,
  });
  // Recorded for the README's figure; an upper bound a loaded machine still meets.
  expect(perTurnMs).toBeLessThan(50);

  const month = 31 * 24 * 60 * 60 * 1000;
  clock = month;
  await learning.sweep();
  expect(await rows()).toMatchObject({ learning_outcomes: 0, learning_sweeps: 1 });
  clock += month;
  await learning.sweep();
  // Everything swept is past the 30-day retention: gone; of the sweep rows the last stays.
  expect(await rows()).toMatchObject({ learning_outcomes: 0, learning_sweeps: 1 });
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});
