import { type ChildProcess, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase } from '@agentd/storage';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ADMIN_TOKEN, daemonPool, eventually, rpcClient } from './helpers.js';

const pool = daemonPool('agentd-crash-');
afterEach(() => pool.cleanup());

/** What the test saw acknowledged before the kill; each must be there after the restart. */
interface Acknowledged {
  memories: string[];
  jobs: string[];
  graphs: string[];
  sessions: string[];
  agents: string[];
}

/** Resolves when the child has exited, even if it already had. */
function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Runs one kind of write in a loop until `stop` is set, recording what was acknowledged. */
async function writeUntil(
  stop: { now: boolean },
  write: (n: number) => Promise<string | undefined>,
  into: string[],
) {
  for (let n = 0; !stop.now; n++) {
    try {
      const id = await write(n);
      if (id !== undefined && !stop.now) into.push(id);
    } catch {
      // A write cut off by the kill was never acknowledged.
      return;
    }
  }
}

describe('agentd killed with SIGKILL during concurrent writes', { timeout: 180_000 }, () => {
  it('keeps every acknowledged write, and the database and config history stay valid', async () => {
    const dataDir = pool.tempDir();
    const env = { AGENTD_ADMIN_TOKEN: ADMIN_TOKEN, AGENTD_GRAPH_EXECUTOR: 'echo' };
    const first = await pool.startProcess(dataDir, env);
    const rpc = rpcClient(first.url);
    const acked: Acknowledged = { memories: [], jobs: [], graphs: [], sessions: [], agents: [] };
    const stop = { now: false };
    const writers = [
      writeUntil(
        stop,
        async (n) => (await rpc.call<{ id: string }>('memory.store', { content: `fact ${n}` })).id,
        acked.memories,
      ),
      writeUntil(
        stop,
        async (n) =>
          (
            await rpc.call<{ id: string }>('cron.add', {
              name: `job-${n}`,
              message: 'tick',
              schedule: { kind: 'interval', everyMs: 3_600_000 },
            })
          ).id,
        acked.jobs,
      ),
      writeUntil(
        stop,
        async (n) => {
          const { graphId } = await rpc.call<{ graphId: string }>('graph.define', {
            nodes: [{ id: 'a', prompt: `step ${n}` }],
          });
          await rpc.call('graph.save', { graphId, name: `saved-${n}` });
          return `saved-${n}`;
        },
        acked.graphs,
      ),
      writeUntil(
        stop,
        async (n) =>
          (
            await rpc.call<{ sessionKey: string }>('agent.execute', {
              message: `turn ${n}`,
              sessionKey: `crash:chat:u${n}`,
            })
          ).sessionKey,
        acked.sessions,
      ),
      writeUntil(
        stop,
        async (n) => (await rpc.call<{ agentId: string }>('agents.create', { name: `agent ${n}` })).agentId,
        acked.agents,
      ),
    ];
    // Let every writer get going (each kind acknowledged at least once), then kill mid-write.
    await eventually(() => (Object.values(acked).every((ids) => ids.length > 0) ? true : undefined), 60_000);
    const killed = exited(first.child);
    first.child.kill('SIGKILL');
    stop.now = true;
    await Promise.all(writers);
    await killed;
    for (const [kind, ids] of Object.entries(acked))
      expect(ids.length, `${kind} acknowledged`).toBeGreaterThan(0);

    const second = await pool.startProcess(dataDir, env);
    const after = rpcClient(second.url);
    for (const id of acked.memories) await after.call('memory.inspect', { id });
    const jobIds = new Set(
      (await after.call<{ jobs: Array<{ id: string }> }>('cron.list')).jobs.map((job) => job.id),
    );
    for (const id of acked.jobs) expect(jobIds.has(id), `cron job ${id}`).toBe(true);
    const saved = JSON.stringify(await after.call('graph.list'));
    for (const name of acked.graphs) expect(saved, `graph ${name}`).toContain(`"${name}"`);
    for (const key of acked.sessions) {
      const history = await after.call<{ messages: Array<{ role: string }> }>('session.history', { key });
      expect(
        history.messages.map((message) => message.role),
        key,
      ).toEqual(['user', 'assistant']);
    }
    const agents = (await after.call<{ agents: string[] }>('agents.list')).agents;
    for (const id of acked.agents) expect(agents, `agent ${id}`).toContain(id);

    const stopped = exited(second.child);
    second.child.kill('SIGTERM');
    await stopped;
    const db = await openDatabase({ dataDir });
    expect(await db.query('PRAGMA integrity_check')).toEqual([{ integrity_check: 'ok' }]);
    await db.close();
    expect(() => parse(readFileSync(join(dataDir, 'config.yaml'), 'utf8'))).not.toThrow();
    execFileSync('git', ['-C', dataDir, 'fsck', '--no-progress'], { stdio: 'pipe' });
  });
});
