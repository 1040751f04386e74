import { pgSuitesEnabled } from '@agentd/storage/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type FakeProvider,
  startFakeOpenAi,
} from '../../../../packages/agent-runtime/test/fake-providers.js';
import { eventually, type RpcClient, rpcClient } from '../helpers.js';
import { type ClusterHarness, type ClusterNode, clusterHarness, modelClusterConfig } from './harness.js';

const MODEL_KEY = 'sk-cluster-graph-model-0123';

/** The text of the last user message of a chat completions request (a node's rendered prompt). */
function lastUserText(body: Record<string, unknown> | undefined): string {
  const messages = (body?.messages as Array<{ role: string; content: unknown }> | undefined) ?? [];
  const last = [...messages].reverse().find((message) => message.role === 'user');
  if (last === undefined) return '';
  if (typeof last.content === 'string') return last.content;
  return (last.content as Array<{ text?: string }>).map((part) => part.text ?? '').join('');
}

/** A chain of nodes `<tag>-<id>`, each run by agent `solo` and fed its predecessor's output. */
function chain(tag: string, ids: string[]) {
  return {
    nodes: ids.map((id, index) => ({
      id,
      agentId: 'solo',
      prompt: index === 0 ? `${tag}-${id}` : `${tag}-${id} after {{nodes.${ids[index - 1]}.output}}`,
      ...(index === 0 ? {} : { dependsOn: [ids[index - 1]] }),
    })),
  };
}

let harness: ClusterHarness | undefined;
let model: FakeProvider | undefined;
let nodes: ClusterNode[] = [];
let clients: RpcClient[] = [];

/** The model calls made for node `<tag>-<id>` (each is one turn of that node). */
const turnsOf = (tag: string, id: string) =>
  (model?.requests ?? []).filter((request) => lastUserText(request.body).startsWith(`${tag}-${id}`)).length;

// Three instances started once for the file: the cancel test first, then the kill (which ends n1).
beforeAll(async () => {
  if (!pgSuitesEnabled()) return;
  model = await startFakeOpenAi({
    apiKey: MODEL_KEY,
    respond: (body) => {
      const text = lastUserText(body);
      // The first turn of kill-b hangs: its instance is killed while it is in flight.
      if (text.startsWith('kill-b') && turnsOf('kill', 'b') === 1) return { text: 'never', hangMs: 120_000 };
      // cancel-x takes a while, so the cancel reaches its owner while it runs.
      if (text.startsWith('cancel-x')) return { text: 'x done', hangMs: 2000 };
      return { text: `${text.split(' ')[0]} done` };
    },
  });
  harness = await clusterHarness('agentd_cluster_graph');
  const config = modelClusterConfig(model.url, { solo: { name: 'Solo', provider: 'oai' } });
  nodes = await harness.startMany(3, config, { MODEL_KEY });
  clients = nodes.map((node) => rpcClient(node.url));
}, 180_000);

afterAll(async () => {
  await harness?.cleanup();
  await model?.close();
  harness = undefined;
  model = undefined;
  nodes = [];
  clients = [];
});

type Status = { status: string; nodes: Array<{ id: string; status: string }> };

describe.skipIf(!pgSuitesEnabled())('graph runs on three instances', { timeout: 180_000 }, () => {
  it('a cancel sent to an instance that does not run the graph stops it on the instance running it', async () => {
    const [, owner, other] = clients as [RpcClient, RpcClient, RpcClient];
    const { graphId } = await owner.call<{ graphId: string }>('graph.define', chain('cancel', ['x', 'y']));
    const { runId } = await owner.call<{ runId: string }>('graph.execute', { graphId });
    await eventually(() => (turnsOf('cancel', 'x') === 1 ? true : undefined), 30_000, 50);

    expect(await other.call('graph.cancel', { runId })).toEqual({
      runId,
      status: 'running',
      cancelled: true,
    });
    // The owner answers from its live run until it ends: x (in flight) finishes, y never starts.
    const final = await eventually(
      async () => {
        const status = await owner.call<Status>('graph.status', { runId });
        return status.status === 'running' ? undefined : status;
      },
      30_000,
      100,
    );
    expect(final.status).toBe('cancelled');
    expect(final.nodes.map((node) => [node.id, node.status])).toEqual([
      ['x', 'completed'],
      ['y', 'cancelled'],
    ]);
    expect((await other.call<Status>('graph.status', { runId })).status).toBe('cancelled');
    expect(turnsOf('cancel', 'x')).toBe(1);
    expect(turnsOf('cancel', 'y')).toBe(0);
  });

  it('a run whose instance is killed with -9 mid-run resumes on another and completes once', async () => {
    const [first, second, third] = clients as [RpcClient, RpcClient, RpcClient];
    const ids = ['a', 'b', 'c', 'd'];
    const { graphId } = await first.call<{ graphId: string }>('graph.define', chain('kill', ids));
    const { runId } = await first.call<{ runId: string }>('graph.execute', { graphId });
    // n1 runs the graph; kill it while node b's turn is in flight (a is complete by then).
    await eventually(() => (turnsOf('kill', 'b') === 1 ? true : undefined), 30_000, 50);
    await harness!.kill(nodes[0]!);

    const final = await eventually(
      async () => {
        const status = await second.call<Status>('graph.status', { runId });
        return status.status === 'completed' ? status : undefined;
      },
      60_000,
      200,
    );
    expect(final.nodes.map((node) => node.status)).toEqual([
      'completed',
      'completed',
      'completed',
      'completed',
    ]);
    // Each node's turn happened once, but b, in flight at the kill, which ran once more on the new owner.
    expect(ids.map((id) => turnsOf('kill', id))).toEqual([1, 2, 1, 1]);
    const outputs = await third.call<{ outputs: Record<string, string | null> }>('graph.outputs', { runId });
    expect(outputs.outputs).toEqual({
      a: 'kill-a done',
      b: 'kill-b done',
      c: 'kill-c done',
      d: 'kill-d done',
    });
    const detail = await third.call<{ resumedCount: number; status: string }>('graph.runDetail', { runId });
    expect(detail).toMatchObject({ status: 'completed', resumedCount: 1 });
  });
});
