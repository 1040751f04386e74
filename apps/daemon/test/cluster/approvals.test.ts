import type { PendingApproval } from '@agentd/approvals';
import { createHttpClient } from '@agentd/client';
import { pgSuitesEnabled } from '@agentd/storage/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, eventually, rpcClient } from '../helpers.js';
import { CLUSTER_CONFIG, type ClusterHarness, type ClusterNode, clusterHarness } from './harness.js';

// The daemons poll the approvals topic every 2 s (the bus's default): a release within 1 s came
// from the notice, one with NOTIFY suppressed from the poll, within one poll and the turn's end.
const WITH_NOTIFY_MS = 1000;
const POLL_ONLY_MS = 3000;
// Without the notice A's release waits for its next poll: the first round's decision falls
// anywhere in A's 2 s poll period, each later one just after A's previous release (a poll), so
// only the notice keeps every release under the bound.
const ROUNDS = 4;

/** An offline agent whose graph_define calls each wait for an operator's decision. */
const CONFIG = {
  ...CLUSTER_CONFIG,
  providers: { entries: { tiny: { type: 'offline', models: ['offline-nano'] } } },
  agents: { entries: { ops: { name: 'Ops', provider: 'tiny', tools: ['graph_define'] } } },
  approvals: { enabled: true, defaultMode: 'require' },
};

let harness: ClusterHarness | undefined;
let nodes: ClusterNode[] = [];
beforeAll(async () => {
  if (!pgSuitesEnabled()) return;
  harness = await clusterHarness('agentd_cluster_approvals');
  nodes = await harness.startMany(3, CONFIG);
}, 180_000);
afterAll(() => harness?.cleanup());

/** A turn on `node` whose tool call needs approval; `doneAt` is set once the turn answered. */
function gatedTurn(node: ClusterNode, sessionKey: string) {
  // Turns wait on approvals: a client with a long request timeout runs them.
  const client = createHttpClient({ url: node.url, token: ADMIN_TOKEN, requestTimeoutMs: 120_000 });
  const state: { doneAt: number | undefined; response: string | undefined; error?: unknown } = {
    doneAt: undefined,
    response: undefined,
  };
  const message = `/tool graph_define ${JSON.stringify({ nodes: [{ id: 'a', prompt: sessionKey }] })}`;
  client.call('agent.execute', { agentId: 'ops', message, sessionKey }).then(
    (answer) => {
      state.doneAt = Date.now();
      state.response = (answer as { response: string }).response;
    },
    (error: unknown) => {
      // Kept for the assertion after the wait (a turn cut off by cleanup is no finding).
      state.error = error;
    },
  );
  return state;
}

/** The request of `sessionKey` as listed by `node` (which may not be the one it waits on). */
function listed(node: ClusterNode, sessionKey: string): Promise<PendingApproval> {
  const admin = rpcClient(node.url);
  return eventually(async () => {
    const { requests } = await admin.call<{ requests: PendingApproval[] }>('admin.approval.pending');
    return requests.find((request) => request.sessionKey === sessionKey);
  }, 20_000);
}

/** Resolves `id` on `node` and answers how long the waiting turn took to answer after that. */
async function releaseLatency(
  node: ClusterNode,
  id: string,
  turn: ReturnType<typeof gatedTurn>,
): Promise<number> {
  const resolution = await rpcClient(node.url).call('admin.approval.resolve', { id, approved: true });
  const resolvedAt = Date.now();
  expect(resolution).toMatchObject({ id, status: 'approved' });
  // A deadline well past the bounds asserted, so a turn never released fails here, not at the timeout.
  await eventually(() => turn.doneAt ?? turn.error, 15_000, 25);
  expect(turn.error).toBeUndefined();
  expect(turn.response).toMatch(/Tool graph_define returned: .*graphId/);
  return turn.doneAt! - resolvedAt;
}

describe.skipIf(!pgSuitesEnabled())('approvals on three instances', { timeout: 120_000 }, () => {
  it('releases the turn waiting on A within 1 s when B approves; a second resolve answers alreadyResolved', async () => {
    const [a, b, c] = nodes as [ClusterNode, ClusterNode, ClusterNode];
    const latencies: number[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      // A session per round: an approval is cached for its session and tool.
      const sessionKey = `default:rpc:ops-notify-${round}`;
      const turn = gatedTurn(a, sessionKey);
      // B hears of A's request; from the second round on it decides as soon as A lists it, so
      // the decision's moment follows A's last release, not B's poll.
      const request = await listed(round === 0 ? b : a, sessionKey);
      expect(request).toMatchObject({ agentId: 'ops', toolName: 'graph_define' });
      expect(turn.doneAt).toBeUndefined();
      latencies.push(await releaseLatency(b, request.id, turn));
      expect(
        await rpcClient(c.url).call('admin.approval.resolve', { id: request.id, approved: false }),
      ).toMatchObject({ id: request.id, status: 'approved', alreadyResolved: true });
    }
    expect(latencies.filter((ms) => ms >= WITH_NOTIFY_MS)).toEqual([]);
  });

  it("keeps A's live request pending while C restarts, and releases it within 3 s when C, with NOTIFY suppressed, approves", async () => {
    const [a, , c] = nodes as [ClusterNode, ClusterNode, ClusterNode];
    const turn = gatedTurn(a, 'default:rpc:ops-restart');
    const request = await listed(c, 'default:rpc:ops-restart');
    // A restart of C (its start denies requests whose owner is gone) must leave A's alone.
    await harness!.kill(c);
    const restarted = await harness!.start('n3', {
      dataDir: c.dataDir,
      env: { AGENTD_TEST_CLUSTER_NO_NOTIFY: '1' },
    });
    nodes[2] = restarted;
    const row = await (await harness!.database()).get<{ status: string }>(
      'SELECT status FROM approval_requests WHERE id = ?',
      [request.id],
    );
    expect(row?.status).toBe('pending');
    expect(turn.doneAt).toBeUndefined();
    expect((await listed(restarted, 'default:rpc:ops-restart')).id).toBe(request.id);
    // C publishes no notice now: A finds the decision at its next poll of the row.
    expect(await releaseLatency(restarted, request.id, turn)).toBeLessThan(POLL_ONLY_MS);
  });
});
