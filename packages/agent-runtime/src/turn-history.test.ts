import { describe, expect, it } from 'vitest';
import { testDialects } from '@agentd/storage/testing';
import { readTrajectory, recordingScript, startRuntime } from '../test/helpers.js';
import type { ModelRequest } from './provider.js';
import { createAgentRuntime } from './runtime.js';

// Every test runs on both dialects (PostgreSQL when the test server is set).
describe.each(testDialects())('turn history on %s', (dialect) => {
  const start = (options: Parameters<typeof startRuntime>[0] = {}) => startRuntime(options, dialect);

  describe('createAgentRuntime', () => {
    it('sends the stored history to the model on the next turn', async () => {
      const seen: ModelRequest[] = [];
      const t = await start({
        offline: { script: recordingScript(seen) },
      });
      await t.runtime.runTurn({ message: 'remember the word kiwi', sessionKey: 'h' });
      await t.runtime.runTurn({ message: 'what was the word?', sessionKey: 'h' });
      expect(seen[1]?.messages).toEqual([
        { role: 'user', content: 'remember the word kiwi' },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: 'what was the word?' },
      ]);
    });

    it('reads history back from the database when the session is not cached', async () => {
      const t = await start();
      for (let index = 0; index < 150; index++)
        await t.runtime.runTurn({ message: `turn ${index}`, sessionKey: 'cold' });
      const seen: ModelRequest[] = [];
      for (const sessionCacheSize of [0, 64]) {
        const fresh = createAgentRuntime({
          db: t.db,
          dataDir: t.dir,
          sessionCacheSize,
          offline: { script: recordingScript(seen) },
        });
        await fresh.runTurn({ message: 'after restart', sessionKey: 'cold' });
        await fresh.close();
      }
      const [uncached, paged] = seen;
      if (!uncached || !paged) throw new Error('no requests');
      expect(uncached.messages.length).toBeGreaterThan(100);
      expect(uncached.messages.at(-1)).toEqual({ role: 'user', content: 'after restart' });
      expect(uncached.messages.at(-3)).toEqual({ role: 'user', content: 'turn 149' });
      expect(paged.messages.slice(-3)).toEqual([
        { role: 'user', content: 'after restart' },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: 'after restart' },
      ]);
      const older = paged.messages.slice(0, -3);
      expect(older.length).toBeGreaterThan(100);
      expect(older).toEqual(uncached.messages.slice(0, -1).slice(-older.length));
    });

    it('keeps only the newest history that fits the budget', async () => {
      const seen: ModelRequest[] = [];
      const t = await start({
        offline: { script: recordingScript(seen) },
        agents: {
          entries: {
            small: {
              name: 'Small',
              systemPrompt: 'be brief',
              contextBudget: { maxWindowTokens: 1400, minOutputTokens: 64 },
            },
          },
        },
      });
      for (let index = 0; index < 20; index++) {
        await t.runtime.runTurn({
          agentId: 'small',
          message: `message ${index} ${'y'.repeat(160)}`,
          sessionKey: 'w',
        });
      }
      const last = seen.at(-1);
      const users = last?.messages.filter((message) => message.role === 'user') ?? [];
      expect(users.length).toBeGreaterThan(1);
      expect(users.length).toBeLessThan(20);
      expect(users.at(-1)?.content).toContain('message 19');
      expect(users.at(-2)?.content).toContain('message 18');
      const budgets = readTrajectory(t.dir, 'w').filter((record) => record.type === 'context_budget');
      const lastBudget = budgets.at(-1);
      if (lastBudget?.type !== 'context_budget') throw new Error('no budget');
      expect(lastBudget.budget.windowTokens).toBe(1400);
      expect(lastBudget.budget.windowCapSource).toBe('capabilityClass');
      expect(lastBudget.budget.assembledInputTokens + lastBudget.budget.outputHeadroom).toBeLessThanOrEqual(
        1400,
      );
      expect(lastBudget.budget.keptCount).toBe((last?.messages.length ?? 0) - 1);
    });
  });
});
