import { describe, expect, it } from 'vitest';
import { testDialects } from '@agentd/storage/testing';
import { recordingScript, startRuntime } from '../test/helpers.js';
import { isAgentRuntimeError } from './errors.js';
import type { ModelRequest } from './provider.js';

// Every test runs on both dialects (PostgreSQL when the test server is set).
describe.each(testDialects())('context DAG on %s', (dialect) => {
  const start = (options: Parameters<typeof startRuntime>[0] = {}) => startRuntime(options, dialect);

  describe('the context DAG', () => {
    it('turns a 500-turn conversation compacted many times into summaries of summaries', async () => {
      const seen: ModelRequest[] = [];
      const t = await start({
        agents: { entries: { ann: { name: 'Ann' }, bob: { name: 'Bob' } } },
        offline: {
          script: recordingScript(seen, (request) =>
            request.purpose === 'compaction' ? undefined : { text: 'ok' },
          ),
        },
      });
      for (let turn = 1; turn <= 500; turn++) {
        await t.runtime.runTurn({ agentId: 'ann', message: `topic ${turn}`, sessionKey: 'acme:rpc:long' });
        if (turn % 50 === 0) expect((await t.runtime.sessions.compact('acme:rpc:long')).compacted).toBe(true);
      }
      await t.runtime.runTurn({ agentId: 'bob', message: 'other', sessionKey: 'acme:rpc:bob' });

      const tree = await t.runtime.context.tree({ agentId: 'ann', conversationId: 'acme:rpc:long' });
      // Ten leaf summaries, condensed four at a time: two depth-2 nodes over eight of them.
      expect(tree.maxDepth).toBe(2);
      const summaries = tree.nodes.filter((node) => node.kind === 'summary');
      expect(summaries.filter((node) => node.depth === 1)).toHaveLength(10);
      expect(summaries.filter((node) => node.depth === 2)).toHaveLength(2);
      const byId = new Map(tree.nodes.map((node) => [node.id, node]));
      for (const node of summaries.filter((entry) => entry.depth === 2)) {
        expect(node.childIds).toHaveLength(4);
        for (const child of node.childIds) expect(byId.get(child)?.parentIds).toEqual([node.id]);
      }
      // Every message is covered by at most one leaf summary; the fresh tail by none.
      const messages = tree.nodes.filter((node) => node.kind === 'message');
      expect(messages).toHaveLength(1000);
      expect(messages.every((node) => node.parentIds.length <= 1)).toBe(true);
      expect(messages.at(-1)?.parentIds).toEqual([]);
      expect(tree.rootIds.filter((id) => id.startsWith('summary:')).length).toBe(4);
      expect(summaries[0]?.preview.length).toBeLessThanOrEqual(200);

      // The next turn's context starts from the highest summaries: the two depth-2 roots and two leaves.
      await t.runtime.runTurn({ agentId: 'ann', message: 'and now?', sessionKey: 'acme:rpc:long' });
      const last = seen.filter((request) => request.purpose !== 'compaction').at(-1);
      expect(last?.system).toContain('Summary of the earlier conversation');
      const roots = tree.rootIds.filter((id) => id.startsWith('summary:')).map((id) => byId.get(id));
      expect(roots.map((node) => node?.depth)).toEqual([2, 2, 1, 1]);

      const list = await t.runtime.context.conversations({ agentId: 'ann' });
      expect(list).toEqual({
        total: 1,
        conversations: [
          expect.objectContaining({ conversationId: 'acme:rpc:long', nodeCount: 12, maxDepth: 2 }),
        ],
      });
      expect((await t.runtime.context.conversations({ agentId: 'ann', keyPrefix: 'other:' })).total).toBe(0);
      // Another agent's conversation is absent, as is one the caller may not see.
      for (const request of [
        { agentId: 'ann', conversationId: 'acme:rpc:bob' },
        { agentId: 'ann', conversationId: 'acme:rpc:long', visible: () => false },
      ]) {
        const error = await t.runtime.context.tree(request).catch((thrown: unknown) => thrown);
        expect(isAgentRuntimeError(error, 'SESSION_NOT_FOUND')).toBe(true);
      }
      await t.runtime.sessions.reset('acme:rpc:long');
      expect(
        (await t.runtime.context.tree({ agentId: 'ann', conversationId: 'acme:rpc:long' })).nodes,
      ).toEqual([]);
    }, 120_000);

    it('compacts on its own when the history passes the threshold, and fits summaries into a small window', async () => {
      const t = await start({
        providers: { entries: { small: { type: 'offline', models: ['s'], contextWindow: 2048 } } },
        agents: { entries: { ann: { name: 'Ann', provider: 'small' } } },
        offline: {
          script: (request) => (request.purpose === 'compaction' ? undefined : { text: 'x'.repeat(400) }),
        },
      });
      for (let turn = 1; turn <= 12; turn++) {
        await t.runtime.runTurn({
          agentId: 'ann',
          message: `question ${turn} ${'y'.repeat(300)}`,
          sessionKey: 'auto',
        });
      }
      await t.runtime.close();
      const tree = await t.runtime.context.tree({ agentId: 'ann', conversationId: 'auto' });
      expect(tree.nodes.filter((node) => node.kind === 'summary').length).toBeGreaterThan(0);
      expect((await t.runtime.billing.bySession('auto')).callCount).toBeGreaterThan(12);
    });
  });
});
