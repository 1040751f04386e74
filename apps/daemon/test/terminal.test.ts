import { afterEach, describe, expect, it } from 'vitest';
import { alive, daemonPool, rpcClient } from './helpers.js';

const pool = daemonPool('agentd-terminal-');
afterEach(() => pool.cleanup());

const config = {
  gateway: { wsHeartbeatMs: 0 },
  agents: { entries: { operator: { name: 'Operator', tools: ['terminal_*'] } } },
  terminal: { killGraceMs: 200 },
};

describe('terminal drives through agent tools', () => {
  it('runs bash in the agent workspace, reads the screen back, and the obs verdicts follow rule 12', async () => {
    const daemon = await pool.start(pool.tempDir(), { config });
    const admin = rpcClient(daemon.url);
    const say = async (sessionKey: string, tool: string, input: Record<string, unknown>) =>
      (
        await admin.call<{ response: string }>('agent.execute', {
          agentId: 'operator',
          sessionKey,
          message: `/tool ${tool} ${JSON.stringify(input)}`,
        })
      ).response;

    const opened = await say('default:rpc:task', 'terminal_open', {
      command: 'bash',
      args: ['--norc', '--noprofile', '-i'],
    });
    const sessionId = /term_[0-9a-f]{16}/.exec(opened)?.[0] as string;
    expect(sessionId).toBeDefined();
    const pid = Number(/"pid":(\d+)/.exec(opened)?.[1]);
    /** Types `text` and Enter into the drive, then answers the screen once quiet for `quietMs`. */
    const run = async (text: string, quietMs: number) => {
      await say('default:rpc:task', 'terminal_send', { sessionId, text, enter: true });
      return say('default:rpc:task', 'terminal_wait', { sessionId, quietMs });
    };
    const screen = await run('echo "answer=$((6*7))"; basename "$PWD"', 300);
    expect(screen).toContain('answer=42');
    expect(screen).toContain('\\noperator\\n');
    expect(await admin.call('workspace.status', { agentId: 'operator' })).toMatchObject({
      initialized: true,
    });
    // git in the drive is the workspace's own repository, and a commit made there names the agent.
    // (`clear` first: the offline provider quotes the first 200 characters of the screen.)
    const gitScreen = await run(
      'echo note > drive.md && git add drive.md && git commit -qm "from the drive" && clear && git log --format="%an|%s" | head -2',
      500,
    );
    expect(gitScreen).toContain('agent operator|from the drive');
    expect(gitScreen).toContain('agentd|workspace: initial template');
    expect(await say('default:rpc:task', 'terminal_close', { sessionId })).toContain('"closed":true');
    expect(alive(pid)).toBe(false);

    // A drive opened and closed without any task text: the report says so.
    const idle = await say('default:rpc:notask', 'terminal_open', {
      command: 'bash',
      args: ['--norc', '--noprofile', '-i'],
    });
    const idleId = /term_[0-9a-f]{16}/.exec(idle)?.[0] as string;
    await say('default:rpc:notask', 'terminal_close', { sessionId: idleId });
    const report = await admin.call<{ likelyRootCause: { code: string } }>('obs.explain', {
      sessionKey: 'default:rpc:notask',
    });
    expect(report.likelyRootCause.code).toBe('terminal_drive_opened_without_task');
    const worked = await admin.call<{ likelyRootCause: { code: string } }>('obs.explain', {
      sessionKey: 'default:rpc:task',
    });
    expect(worked.likelyRootCause.code).not.toMatch(/^terminal_/);
  });

  it('reports an idle eviction as terminal_drive_evicted and kills the drive when the daemon stops', async () => {
    const daemon = await pool.start(pool.tempDir(), {
      config: { ...config, terminal: { killGraceMs: 200, idleTimeoutMs: 400 } },
    });
    const admin = rpcClient(daemon.url);
    const open = (sessionKey: string) =>
      admin.call<{ response: string }>('agent.execute', {
        agentId: 'operator',
        sessionKey,
        message: `/tool terminal_open ${JSON.stringify({ command: 'bash', args: ['--norc', '-i'], input: 'sleep 100\r' })}`,
      });
    await open('default:rpc:slow');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const report = await admin.call<{ likelyRootCause: { code: string; detail: string } }>('obs.explain', {
      sessionKey: 'default:rpc:slow',
    });
    expect(report.likelyRootCause.code).toBe('terminal_drive_evicted');
    expect(report.likelyRootCause.detail).toContain('reason idle');

    await admin.call('config.patch', { terminal: { idleTimeoutMs: 600_000 } });
    const kept = await open('default:rpc:kept');
    const pid = Number(/"pid":(\d+)/.exec(kept.response)?.[1]);
    expect(alive(pid)).toBe(true);
    await daemon.stop();
    expect(alive(pid)).toBe(false);
  });
});
