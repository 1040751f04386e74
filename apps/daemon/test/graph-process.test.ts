import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createHttpClient } from '@agentd/client';
import { afterEach, describe, expect, it } from 'vitest';
import { type DaemonProcess, daemonPool } from './helpers.js';

const token = 'graph-process-admin-token-0123456789abcdef';

const pool = daemonPool('agentd-graph-crash-');
afterEach(() => pool.cleanup());

/** Starts `agentd start` as a real process (the echo executor through `env`) and waits until it listens. */
function startProcess(dataDir: string, env: NodeJS.ProcessEnv): Promise<DaemonProcess> {
  return pool.startProcess(dataDir, { AGENTD_ADMIN_TOKEN: token, ...env });
}

interface NodeView {
  id: string;
  status: string;
  output?: string;
}

describe('graph runs across a daemon crash', { timeout: 120_000 }, () => {
  it('resumes an interrupted run after the daemon process is killed: completed nodes keep their outputs', async () => {
    const dataDir = pool.tempDir();
    // Each echo node takes 400 ms, so the kill lands while the second node is in flight.
    const first = await startProcess(dataDir, {
      AGENTD_GRAPH_EXECUTOR: 'echo',
      AGENTD_GRAPH_ECHO_DELAY_MS: '400',
    });
    const before = createHttpClient({ url: first.url, token });
    const call = (client: typeof before, method: string, params: Record<string, unknown>) =>
      client.call(method as 'system.ping', params as never) as Promise<never>;

    const { graphId } = await call(before, 'graph.define', {
      nodes: [
        { id: 'one', prompt: 'one({{inputs.seed}})' },
        { id: 'two', prompt: 'two({{nodes.one.output}})', dependsOn: ['one'] },
        { id: 'three', prompt: 'three({{nodes.two.output}})', dependsOn: ['two'] },
      ],
    });
    const { runId } = await call(before, 'graph.execute', { graphId, inputs: { seed: 7 } });
    for (;;) {
      const status: { nodes: NodeView[] } = await call(before, 'graph.status', { runId });
      if (status.nodes[1]!.status === 'running') break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const killed = new Promise((resolve) => first.child.once('exit', resolve));
    first.child.kill('SIGKILL');
    await killed;
    expect(existsSync(join(dataDir, 'graph-runs', runId, 'one.txt'))).toBe(true);
    expect(existsSync(join(dataDir, 'graph-runs', runId, 'two.txt'))).toBe(false);

    const second = await startProcess(dataDir, {
      AGENTD_GRAPH_EXECUTOR: 'echo',
      AGENTD_GRAPH_ECHO_DELAY_MS: '50',
    });
    const after = createHttpClient({ url: second.url, token });
    let status: { status: string; nodes: NodeView[] };
    for (;;) {
      status = await call(after, 'graph.status', { runId });
      if (status.status !== 'running') break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(status.status).toBe('completed');
    expect(await call(after, 'graph.outputs', { runId })).toEqual({
      outputs: { one: 'one(7)', two: 'two(one(7))', three: 'three(two(one(7)))' },
      source: 'memory',
    });
    const detail: { resumedCount: number; nodes: Array<{ id: string; attempts: number }> } = await call(
      after,
      'graph.runDetail',
      { runId },
    );
    expect(detail.resumedCount).toBe(1);
    // `one` ran once (before the crash); `two` was interrupted and ran again.
    expect(detail.nodes.map((node) => [node.id, node.attempts])).toEqual([
      ['one', 1],
      ['two', 2],
      ['three', 1],
    ]);
  });

  it('refuses to start with an unknown AGENTD_GRAPH_EXECUTOR', async () => {
    const dataDir = pool.tempDir();
    await expect(startProcess(dataDir, { AGENTD_GRAPH_EXECUTOR: 'magic' })).rejects.toThrow(
      /AGENTD_GRAPH_EXECUTOR must be 'echo' or unset/,
    );
  });
});
