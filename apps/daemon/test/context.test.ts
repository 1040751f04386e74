import { createHttpClient } from '@agentd/client';
import { afterEach, describe, expect, it } from 'vitest';
import { daemonPool, rpcClient, rpcFailure } from './helpers.js';

type Json = Record<string, unknown>;
type Tree = {
  maxDepth: number;
  nodes: Array<{ id: string; kind: string; depth: number; childIds: string[] }>;
};

const pool = daemonPool('agentd-context-');
afterEach(() => pool.cleanup());

describe('context.* through the daemon', () => {
  it('browses the calling agent’s DAG, never another agent’s or tenant’s conversations', async () => {
    const { url } = await pool.start(pool.tempDir(), {
      config: { agents: { entries: { ann: { name: 'Ann' } } } },
    });
    const admin = rpcClient(url);
    const token = async (params: Json) =>
      createHttpClient({
        url,
        token: (await admin.call<{ token: string }>('tokens.create', { scopes: ['rpc'], ...params })).token,
      });
    const annAcme = await token({ clientId: 'ann', tenant: 'acme' });
    const annAny = await token({ clientId: 'ann' });
    const someone = await token({ clientId: 'someone', tenant: 'acme' });

    for (let turn = 1; turn <= 40; turn++) {
      await admin.call('agent.execute', {
        agentId: 'ann',
        message: `step ${turn}`,
        sessionKey: 'acme:rpc:long',
      });
      if (turn % 5 === 0) await admin.call('session.compact', { key: 'acme:rpc:long' });
    }
    await admin.call('agent.execute', { agentId: 'ann', message: 'hi', sessionKey: 'globex:rpc:ann' });
    await admin.call('agent.execute', { message: 'hi', sessionKey: 'acme:rpc:default' });

    type Page = { agentId: string; total: number; conversations: Json[] };
    const list = async (client: typeof annAcme, params: Json = {}) =>
      (await client.call('context.conversations', params)) as Page;
    const mine = await list(annAcme);
    expect(mine.agentId).toBe('ann');
    expect(mine.conversations).toEqual([
      expect.objectContaining({ conversationId: 'acme:rpc:long', messageCount: 80, maxDepth: 2 }),
    ]);
    // An unbound token of the same agent sees the agent's conversations of every tenant.
    expect((await list(annAny, { limit: 1, offset: 1 })).conversations).toHaveLength(1);
    // Another client is the default agent: only its conversation in the tenant.
    expect((await list(someone)).conversations).toEqual([
      expect.objectContaining({ conversationId: 'acme:rpc:default', agentId: 'default' }),
    ]);

    const tree = (await annAcme.call('context.tree', { conversationId: 'acme:rpc:long' })) as Tree;
    expect(tree.maxDepth).toBeGreaterThan(1);
    const top = tree.nodes.find((node) => node.depth === 2);
    expect(top?.childIds).toHaveLength(4);
    for (const [client, conversationId] of [
      [annAcme, 'globex:rpc:ann'],
      [someone, 'acme:rpc:long'],
      [annAcme, 'acme:rpc:default'],
    ] as const) {
      const error = await rpcFailure(client.call('context.tree', { conversationId }));
      expect(error.code).toBe(-32004);
      expect(error.message).toBe(`Conversation not found: ${conversationId}`);
    }
    expect((await rpcFailure(annAcme.call('context.conversations', { limit: 0 }))).code).toBe(-32602);

    const dag = await admin.call<{ agents: Json[] }>('obs.context.dag', { agentId: 'ann' });
    expect(dag.agents).toEqual([
      expect.objectContaining({ agentId: 'ann', maxDepth: 2, nodesByDepth: { '1': 8, '2': 2 } }),
    ]);
    const pipeline = await admin.call<Json>('obs.context.pipeline', { agentId: 'ann' });
    expect(pipeline).toMatchObject({
      compaction: { auto: true, fanout: 4 },
      budgets: { summaryShare: 0.25, agent: { contextBudget: expect.any(Object) } },
    });
    expect((pipeline.layers as Json[]).map((layer) => layer.name)).toEqual([
      'system',
      'skills',
      'recall',
      'summaries',
      'history',
      'freshTail',
    ]);
  }, 60_000);
});
