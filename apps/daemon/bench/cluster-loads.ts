/**
 * The cluster benchmark's loads: agent turns from concurrent sessions spread over the
 * instances, and the wake-up of a turn waiting on an approval decided on another instance.
 */
import type { BenchNode } from './cluster-nodes.js';

/** Turns finished and the latency of each, ms; turns that failed, by error message. */
export interface TurnLoad {
  turns: number;
  ms: number;
  latencies: number[];
  failures: Map<string, number>;
}

/**
 * `sessions` workers, each on its own session on instance `index % nodes.length`, run
 * `agent.execute` back to back for `ms`; a turn in flight at the end still counts.
 */
export async function sessionTurns(
  nodes: readonly BenchNode[],
  agentId: string,
  sessions: number,
  ms: number,
  tag: string,
): Promise<TurnLoad> {
  const latencies: number[] = [];
  const failures = new Map<string, number>();
  const started = performance.now();
  const until = started + ms;
  await Promise.all(
    Array.from({ length: sessions }, async (_, index) => {
      const node = nodes[index % nodes.length]!;
      for (let turn = 0; performance.now() < until; turn += 1) {
        const begun = performance.now();
        try {
          await node.client.call('agent.execute', {
            agentId,
            sessionKey: `bench:${tag}:${index}`,
            message: `turn ${turn}`,
          });
          latencies.push(performance.now() - begun);
        } catch (error) {
          // Counted and reported beside the figures, never folded into them.
          const text = error instanceof Error ? error.message : String(error);
          failures.set(text, (failures.get(text) ?? 0) + 1);
        }
      }
    }),
  );
  return { turns: latencies.length, ms: performance.now() - started, latencies, failures };
}

/** An offline agent whose graph_define calls wait for an operator's decision. */
export const APPROVALS_CONFIG = {
  providers: { entries: { tiny: { type: 'offline', models: ['offline-nano'] } } },
  agents: { entries: { ops: { name: 'Ops', provider: 'tiny', tools: ['graph_define'] } } },
  approvals: { enabled: true, defaultMode: 'require' },
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `samples` times: a turn on `waiter` whose tool call needs approval, approved on `decider` as
 * soon as the waiter lists it; answers, per sample, the time from the decision's answer to the
 * turn's (the waiter's wake-up plus the rest of an offline turn).
 */
export async function approvalWakeUps(
  waiter: BenchNode,
  decider: BenchNode,
  samples: number,
): Promise<number[]> {
  const latencies: number[] = [];
  for (let sample = 0; sample < samples; sample += 1) {
    // A session per sample: an approval is cached for its session and tool.
    const sessionKey = `bench:approval:${sample}`;
    const message = `/tool graph_define ${JSON.stringify({ nodes: [{ id: 'a', prompt: 'p' }] })}`;
    let answeredAt = 0;
    const turn = waiter.client.call('agent.execute', { agentId: 'ops', message, sessionKey }).then(() => {
      answeredAt = performance.now();
    });
    let id: string | undefined;
    while (id === undefined) {
      const { requests } = (await waiter.client.call('admin.approval.pending')) as {
        requests: Array<{ id: string; sessionKey: string }>;
      };
      id = requests.find((request) => request.sessionKey === sessionKey)?.id;
      if (id === undefined) await sleep(10);
    }
    // Decided at a moment unrelated to the waiter's poll timer: a spread over one poll period.
    await sleep(Math.floor(Math.random() * 2000));
    await decider.client.call('admin.approval.resolve', { id, approved: true });
    const decidedAt = performance.now();
    await turn;
    latencies.push(answeredAt - decidedAt);
  }
  return latencies;
}
