import { pgSuitesEnabled } from '@agentd/storage/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, openRaw, type RpcClient, rpcClient } from '../helpers.js';
import { CLUSTER_CONFIG, type ClusterHarness, type ClusterNode, clusterHarness } from './harness.js';

// `coder` may use its workspace, so it gets a home instance; `boss` only spawns sub-agents and
// runs anywhere. Neither names a provider: the offline one answers, no model server needed.
const CONFIG = {
  ...CLUSTER_CONFIG,
  gateway: { wsHeartbeatMs: 0 },
  agents: {
    entries: {
      coder: { name: 'Coder', tools: ['workspace_*'] },
      boss: { name: 'Boss', tools: ['subagent_*'] },
    },
  },
};

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
