import { readdirSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { daemonPool, eventually, rpcClient } from './helpers.js';

const pool = daemonPool('agentd-orch-limits-');
afterEach(() => pool.cleanup());

const hostProcesses = () => readdirSync('/proc').filter((entry) => /^\d+$/.test(entry)).length;

describe('a fork bomb in an orchestrate script (issue #31)', () => {
  it('stays inside its run: the host process count stays bounded and system.ping keeps answering', async () => {
    const daemon = await pool.start(pool.tempDir(), {
      config: {
        gateway: { wsHeartbeatMs: 0 },
        orchestrate: { maxProcesses: 48 },
        agents: {
          entries: {
            bomber: {
              name: 'Bomber',
              tools: ['orchestrate'],
              timeouts: { turnMs: 120_000, stallMs: 90_000, toolMs: 60_000 },
            },
          },
        },
      },
    });
    const rpc = rpcClient(daemon.url);
    // Detached children that outlive their parent, as many as the jail lets it start.
    const script = `
      import { spawn } from 'node:child_process';
      let started = 0;
      for (let i = 0; i < 300; i++) {
        try {
          const child = spawn('sleep', ['63'], { detached: true, stdio: 'ignore' });
          child.on('error', () => {});
          child.unref();
          if (child.pid) started++;
        } catch {}
      }
      console.log(JSON.stringify({ started }));
    `;
    const before = hostProcesses();
    const run = await rpc.call<{ runId: string; sessionKey: string }>('session.spawn', {
      parentKey: 'default:rpc:ops',
      task: `/tool orchestrate ${JSON.stringify({ script })}`,
      agentId: 'bomber',
    });
    let peak = before;
    let pings = 0;
    const done = await eventually(async () => {
      peak = Math.max(peak, hostProcesses());
      expect(await rpc.call('system.ping', {})).toMatchObject({ pong: true });
      pings += 1;
      const status = await rpc.call<{ status: string }>('session.run_status', { run_id: run.runId });
      return status.status === 'running' ? undefined : status;
    }, 90_000);
    expect(done.status).toBe('completed');
    expect(pings).toBeGreaterThan(0);
    expect(peak - before).toBeLessThan(48 + 30);
    const history = await rpc.call<{ messages: Array<{ role: string; content: string }> }>(
      'session.history',
      {
        key: run.sessionKey,
      },
    );
    const result = JSON.parse(history.messages.find((message) => message.role === 'tool')?.content ?? '{}');
    expect(result).toMatchObject({ exitCode: 0, outcome: 'success' });
    expect(JSON.parse(String(result.stdout)).started).toBeLessThan(48);
  }, 120_000);
});
