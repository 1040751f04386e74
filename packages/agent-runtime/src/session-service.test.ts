import { describe, expect, it } from 'vitest';
import { testDialects } from '@agentd/storage/testing';
import { recordingScript, startRuntime } from '../test/helpers.js';
import type { ModelRequest } from './provider.js';

// Every test runs on both dialects (PostgreSQL when the test server is set).
describe.each(testDialects())('sessions on %s', (dialect) => {
  const start = (options: Parameters<typeof startRuntime>[0] = {}) => startRuntime(options, dialect);

  describe('AgentRuntime.sessions', () => {
    it('reports status, lists, exports and searches sessions', async () => {
      const t = await start();
      await t.runtime.runTurn({ message: 'tell me about pineapples', sessionKey: 'fruit' });
      await t.runtime.runTurn({ message: 'and bicycles', sessionKey: 'wheels', origin: 'cron' });
      const status = await t.runtime.sessions.status('fruit');
      expect(status).toMatchObject({
        sessionKey: 'fruit',
        agentId: 'default',
        model: 'offline',
        provider: 'offline',
        stepsExecuted: 1,
        stepLimit: 8,
        messageCount: 2,
      });
      expect(await t.runtime.sessions.list({ kind: 'cron' })).toEqual([
        expect.objectContaining({ sessionKey: 'wheels', kind: 'cron' }),
      ]);
      expect((await t.runtime.sessions.list()).map((row) => row.sessionKey).sort()).toEqual([
        'fruit',
        'wheels',
      ]);
      const exported = await t.runtime.sessions.export('fruit');
      expect(exported).toMatchObject({
        sessionKey: 'fruit',
        messageCount: 2,
        metadata: { agentId: 'default', channelType: 'webchat' },
      });
      expect(exported.messages).toHaveLength(2);
      const hits = await t.runtime.sessions.search('pineapples');
      expect(hits).toEqual([
        expect.objectContaining({
          sessionKey: 'fruit',
          agentId: 'default',
          channelType: 'webchat',
          snippet: expect.stringContaining('[pineapples]'),
        }),
      ]);
      expect(await t.runtime.sessions.search('   ')).toEqual([]);
      await expect(t.runtime.sessions.status('missing')).rejects.toMatchObject({
        code: 'SESSION_NOT_FOUND',
        message: 'Session not found: missing',
      });
    });

    it('appends a note between turns that the next turn sees, only to an existing session', async () => {
      const seen: ModelRequest[] = [];
      const t = await start({ offline: { script: recordingScript(seen) } });
      await t.runtime.runTurn({ message: 'start', sessionKey: 'parent' });
      expect(await t.runtime.sessions.note('parent', '[sub-agent run r1 completed] 42')).toBe(true);
      expect(await t.runtime.sessions.note('absent', 'x')).toBe(false);
      const history = await t.runtime.sessions.history('parent');
      expect(history.messages.map((message) => [message.role, message.content.slice(0, 20)])).toEqual([
        ['user', 'start'],
        ['assistant', expect.any(String)],
        ['user', '[sub-agent run r1 co'],
      ]);
      await t.runtime.runTurn({ message: 'what did it say?', sessionKey: 'parent' });
      expect(seen.at(-1)?.messages.map((message) => message.content)).toEqual([
        'start',
        'ok',
        '[sub-agent run r1 completed] 42',
        'what did it say?',
      ]);
      expect((await t.runtime.sessions.status('parent')).messageCount).toBe(5);
      const after = await t.runtime.sessions.history('parent');
      expect(after.messages.map((message) => message.seq)).toEqual([1, 2, 3, 4, 5]);
    });

    it('resets messages but keeps the session, and deletes sessions returning the transcript', async () => {
      const cleared: string[] = [];
      const t = await start({
        approvals: {
          clearSession: (key) => {
            cleared.push(key);
            return 1;
          },
        },
      });
      await t.runtime.runTurn({ message: 'one', sessionKey: 'r' });
      expect(await t.runtime.sessions.reset('r')).toEqual({
        sessionKey: 'r',
        reset: true,
        previousMessageCount: 2,
      });
      expect(cleared).toEqual(['r']);
      expect((await t.runtime.sessions.history('r')).messages).toEqual([]);
      expect(await t.runtime.sessions.search('one')).toEqual([]);
      const status = await t.runtime.sessions.status('r');
      expect(status.turns).toBe(1);
      await t.runtime.runTurn({ message: 'two', sessionKey: 'r' });
      expect((await t.runtime.sessions.history('r')).messages[0]?.seq).toBe(3);

      const deleted = await t.runtime.sessions.delete('r');
      expect(deleted).toMatchObject({
        sessionKey: 'r',
        deleted: true,
        transcript: { sessionKey: 'r', messageCount: 2 },
      });
      await expect(t.runtime.sessions.history('r')).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
      await expect(t.runtime.sessions.delete('r')).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
    });

    it('resets a conversation with counts only and memory deletion when asked', async () => {
      const deletions: unknown[] = [];
      const t = await start({
        memory: {
          deleteBySession: async (input) => {
            deletions.push(input);
            return 3;
          },
        },
      });
      await t.runtime.runTurn({ message: 'one', sessionKey: 'rc' });
      await t.runtime.runTurn({ message: 'two', sessionKey: 'rc' });
      expect(await t.runtime.sessions.resetConversation('rc')).toEqual({
        sessionKey: 'rc',
        lcdRowsDeleted: 4,
        sessionMessagesCleared: 4,
        runtimeSessionDestroyed: true,
      });
      expect(await t.runtime.sessions.resetConversation('rc', { memory: true, purgeDerived: true })).toEqual({
        sessionKey: 'rc',
        lcdRowsDeleted: 0,
        sessionMessagesCleared: 0,
        memoriesDeleted: 3,
        runtimeSessionDestroyed: true,
      });
      expect(deletions).toEqual([{ agentId: 'default', sessionKey: 'rc', purgeDerived: true }]);
      expect(await t.runtime.sessions.resetConversation('never-existed')).toMatchObject({
        lcdRowsDeleted: 0,
        sessionMessagesCleared: 0,
      });
    });

    it('reports a failed memory deletion as zero and keeps the transcript reset', async () => {
      const t = await start({
        memory: { deleteBySession: async () => Promise.reject(new Error('memory down')) },
      });
      await t.runtime.runTurn({ message: 'one', sessionKey: 'mf' });
      expect(await t.runtime.sessions.resetConversation('mf', { memory: true })).toMatchObject({
        sessionMessagesCleared: 2,
        memoriesDeleted: 0,
      });
    });
  });
});
