import { createHmac } from 'node:crypto';
import { openDatabase } from '@agentd/storage';
import { pgSuitesEnabled } from '@agentd/storage/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, eventually, openRaw, type RpcClient, rpcClient } from '../helpers.js';
import { CLUSTER_CONFIG, type ClusterHarness, type ClusterNode, clusterHarness } from './harness.js';

const HOOK_TOKEN = 'cluster-affinity-hook-token-0123456789';
// `coder` and `builder` may use their workspaces, so they get a home instance; `boss` only
// spawns sub-agents and runs anywhere. None names a provider: the offline one answers, no model
// server needed. A signed post to `/hooks/build` is a turn of `builder`.
const CONFIG = {
  ...CLUSTER_CONFIG,
  gateway: { wsHeartbeatMs: 0 },
  openaiApi: { enabled: true },
  webhooks: {
    enabled: true,
    token: HOOK_TOKEN,
    mappings: [{ id: 'build', match: { path: 'build' }, agentId: 'builder', messageTemplate: 'build done' }],
  },
  agents: {
    entries: {
      coder: { name: 'Coder', tools: ['workspace_*'] },
      builder: { name: 'Builder', tools: ['workspace_*'] },
      boss: { name: 'Boss', tools: ['subagent_*'] },
    },
  },
};
const AFFINITY_OF_A = () => ({ code: 'INSTANCE_AFFINITY', instanceId: idOfA, advertiseUrl: a.url });

/** Two instances suffice: what one holds, the other must send the caller to. */
let harness: ClusterHarness | undefined;
let a: ClusterNode;
let b: ClusterNode;
let onA: RpcClient;
let onB: RpcClient;
let idOfA: string;

beforeAll(async () => {
  if (!pgSuitesEnabled()) return;
  harness = await clusterHarness('agentd_cluster_affinity');
  a = await harness.start('a', { config: CONFIG });
  b = await harness.start('b', { config: CONFIG });
  onA = rpcClient(a.url);
  onB = rpcClient(b.url);
  idOfA = (await harness.status(a)).instanceId;
}, 180_000);
afterAll(async () => {
  await harness?.cleanup();
});

describe.skipIf(!pgSuitesEnabled())(
  'host-bound handles and homes on two instances',
  { timeout: 120_000 },
  () => {
    it("sends a homed agent's turns and workspace on another instance to its home (-32010 with its URL)", async () => {
      const first = await onA.call<{ response: string }>('agent.execute', {
        agentId: 'coder',
        sessionKey: 'coding',
        message: 'hi',
      });
      expect(first.response).toEqual(expect.any(String));
      const turn = await onB.fail('agent.execute', {
        agentId: 'coder',
        sessionKey: 'coding',
        message: 'again',
      });
      expect(turn.code).toBe(-32010);
      expect(turn.data).toEqual({ code: 'INSTANCE_AFFINITY', instanceId: idOfA, advertiseUrl: a.url });
      const workspace = await onB.fail('workspace.listDir', { agentId: 'coder' });
      expect(workspace.code).toBe(-32010);
      expect(workspace.data).toEqual({ code: 'INSTANCE_AFFINITY', instanceId: idOfA, advertiseUrl: a.url });
      // The home keeps serving it, and an agent without host-bound tools runs anywhere.
      await onA.call('agent.execute', { agentId: 'coder', sessionKey: 'coding', message: 'still here' });
      await onB.call('agent.execute', { agentId: 'boss', sessionKey: 'bossing', message: 'anywhere' });
    });

    it("sends a homed agent's chat stream, /v1 chat completion and session.send by key elsewhere to its home", async () => {
      await onA.call('agent.execute', { agentId: 'coder', sessionKey: 'coding', message: 'homed' });
      const stream = await fetch(
        `${b.url}/api/chat/stream?${new URLSearchParams({ message: 'hi', agentId: 'coder', sessionKey: 'streamed' })}`,
        { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } },
      );
      const events = (await stream.text()).split('\n\n').filter((block) => block.includes('event: error'));
      expect(events).toHaveLength(1);
      const error = JSON.parse(/^data: (.*)$/m.exec(events[0]!)?.[1] ?? 'null');
      expect(error).toMatchObject({ code: -32010, data: AFFINITY_OF_A() });
      const completion = await fetch(`${b.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'coder', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(completion.status).toBe(409);
      expect(((await completion.json()) as { error: { code: string } }).error.code).toBe('instance_affinity');
      // The session is coder's: the call names no agent, and the session's own is checked.
      const sent = await onB.fail('session.send', { key: 'coding', message: 'by key' });
      expect(sent.code).toBe(-32010);
      expect(sent.data).toEqual(AFFINITY_OF_A());
    });

    it("takes a homed agent's home with its webhook turn: the other instance then answers -32010", async () => {
      const body = JSON.stringify({ build: 1 });
      const posted = await fetch(`${b.url}/hooks/build`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-webhook-signature': createHmac('sha256', HOOK_TOKEN).update(body).digest('hex'),
        },
        body,
      });
      expect(posted.status).toBeLessThan(300);
      const db = await openDatabase({ url: harness!.databaseUrl, poolMax: 1 });
      try {
        // Either instance's drainer may run the job; the one that ran it holds builder's home.
        await eventually(async () => {
          const rows = await db.query<{ status: string }>('SELECT status FROM webhook_agent_queue');
          return rows.length === 1 && rows[0]?.status === 'done' ? true : undefined;
        }, 60_000);
        const [home] = await db.query<{ owner: string | null }>(
          "SELECT owner FROM agent_homes WHERE agent_id = 'builder'",
        );
        expect(home?.owner).toEqual(expect.any(String));
        const [holder, other] = home?.owner === idOfA ? [a, onB] : [b, onA];
        const turn = await other.fail('agent.execute', {
          agentId: 'builder',
          sessionKey: 'built',
          message: 'hi',
        });
        expect(turn.code).toBe(-32010);
        expect(turn.data).toEqual({
          code: 'INSTANCE_AFFINITY',
          instanceId: home?.owner,
          advertiseUrl: holder.url,
        });
      } finally {
        await db.close();
      }
    });

    it("answers a browser tab opened on one instance, named on the other, with the owner's URL", async () => {
      const { tabId } = await onA.call<{ tabId: string }>('browser.open', {});
      const focus = await onB.fail('browser.focus', { tabId });
      expect(focus.code).toBe(-32010);
      expect(focus.data).toEqual({ code: 'INSTANCE_AFFINITY', instanceId: idOfA, advertiseUrl: a.url });
      expect(focus.message).toContain(`Browser tab ${tabId}`);
      expect(await onA.call('browser.focus', { tabId })).toEqual({ focused: true, tabId });
      await onA.call('browser.stop');
    });

    it("delivers a sub-agent's completion, run on one instance, to the client's socket on the other", async () => {
      const socket = await openRaw(b.url.replace(/^http/, 'ws').concat('/ws'), ADMIN_TOKEN);
      try {
        // The operator's default session on A is the parent; the run ends on A.
        const parent = await onA.call<{ sessionKey: string }>('agent.execute', {
          agentId: 'boss',
          sessionKey: 'bossing',
          message: 'hi',
        });
        const spawned = await onA.call<{ runId: string; sessionKey: string }>('session.spawn', {
          parentKey: parent.sessionKey,
          task: 'say hello',
          agentId: 'boss',
        });
        for (;;) {
          const notice = (await socket.next(30_000)) as { method?: string; params?: Record<string, unknown> };
          if (notice.method !== 'session.completed') continue;
          expect(notice.params).toMatchObject({ sessionKey: spawned.sessionKey, runId: spawned.runId });
          break;
        }
      } finally {
        socket.close();
      }
    });
  },
);
