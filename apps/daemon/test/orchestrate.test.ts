import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { alive, pidsOf } from '@agentd/test-support';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { listenLocal } from '../../../packages/channels/test/fake-server.js';
import { daemonPool, eventually, rpcClient } from './helpers.js';

type Json = Record<string, unknown>;

const pool = daemonPool('agentd-orchestrate-');
afterEach(() => pool.cleanup());

/** A daemon whose offline agent `orch` may run scripts, introspect itself and (never from a script) spawn. */
async function orchestrateDaemon() {
  const dataDir = pool.tempDir();
  const timeouts = { turnMs: 120_000, stallMs: 90_000, toolMs: 60_000 };
  const daemon = await pool.start(dataDir, {
    config: {
      gateway: { wsHeartbeatMs: 0 },
      agents: {
        entries: {
          orch: {
            name: 'Orch',
            tools: ['orchestrate', 'capabilities_introspect', 'subagent_spawn'],
            timeouts,
          },
        },
      },
    },
  });
  return { daemon, dataDir, rpc: rpcClient(daemon.url) };
}

/** The offline provider's tool directive: the run calls `orchestrate` with `script`. */
function orchestrateTask(script: string): string {
  return `/tool orchestrate ${JSON.stringify({ script })}`;
}

async function ended(rpc: ReturnType<typeof rpcClient>, runId: string): Promise<Json> {
  return eventually(async () => {
    const run = await rpc.call<Json>('session.run_status', { run_id: runId });
    return run.status === 'running' ? undefined : run;
  }, 60_000);
}

describe('the orchestrate tool through the daemon', () => {
  it('runs a jailed script whose socket calls reach a builtin and an RPC-routed tool as the run, and reports it', async () => {
    const { rpc, dataDir } = await orchestrateDaemon();
    // A private address the web_fetch builtin must not reach (media's guard, DNS pinned).
    let privateHits = 0;
    const privateServer = await listenLocal((_request, response) => {
      privateHits += 1;
      response.end('internal');
    });
    const port = new URL(privateServer.url).port;
    onTestFinished(privateServer.close);
    const script = `
      import { invoke } from '/agentd/orch.mjs';
      import fs from 'node:fs';
      fs.writeFileSync('/workspace/data.txt', 'alpha');
      const fetched = await invoke('web_fetch', { url: 'http://127.0.0.1:${port}/internal' });
      const me = await invoke('capabilities_introspect', { sessionKey: 'default:rpc:ops' });
      const text = await invoke('read', { path: 'data.txt' });
      const denied = await invoke('subagent_spawn', { task: 'x' }).then(() => 'allowed', (e) => e.data.reason);
      const data = fs.existsSync(${JSON.stringify(dataDir)});
      console.log(JSON.stringify({ runs: me.runs.map((run) => run.runId), text: text.text, denied, data, fetched }));
    `;
    const run = await rpc.call<{ runId: string; sessionKey: string }>('session.spawn', {
      parentKey: 'default:rpc:ops',
      task: orchestrateTask(script),
      agentId: 'orch',
    });
    const done = await ended(rpc, run.runId);
    expect(done.status).toBe('completed');
    expect(readFileSync(join(dataDir, 'workspaces', 'orch', 'data.txt'), 'utf8')).toBe('alpha');
    expect(privateHits).toBe(0);

    const history = await rpc.call<{ messages: Array<{ role: string; content: string }> }>(
      'session.history',
      {
        key: run.sessionKey,
      },
    );
    const toolMessage = history.messages.find((message) => message.role === 'tool');
    const result = JSON.parse(toolMessage?.content ?? '{}') as Json;
    expect(result).toMatchObject({ exitCode: 0, outcome: 'success' });
    // Identity of the routed call came from the lease: the run itself, not the session the script named.
    const printed = JSON.parse(String(result.stdout));
    expect(printed).toMatchObject({ runs: [run.runId], text: 'alpha', denied: 'denylist', data: false });
    expect(printed.fetched).toMatchObject({ ok: false, error: expect.stringContaining('loopback address') });

    const report = await eventually(async () => {
      const explained = await rpc.call<{ orchestrate?: Json[] }>('obs.explain', {
        sessionKey: run.sessionKey,
      });
      return explained.orchestrate?.length ? explained : undefined;
    });
    expect(report.orchestrate?.[0]).toMatchObject({
      runId: result.runId,
      leaseId: result.leaseId,
      outcome: 'success',
      exitCode: 0,
      toolCalls: expect.arrayContaining([
        {
          tool: 'capabilities_introspect',
          capability: 'capabilities_introspect',
          decision: 'allowed',
          count: 1,
        },
        { tool: 'read', capability: 'orchestrate', decision: 'allowed', count: 1 },
        { tool: 'web_fetch', capability: 'orchestrate', decision: 'allowed', count: 1 },
        { tool: 'subagent_spawn', capability: 'subagent_spawn', decision: 'denied_denylist', count: 1 },
      ]),
    });
    const fleet = await rpc.call<{ findings: Array<{ code: string }> }>('obs.fleet.health', {});
    expect(fleet.findings.map((finding) => finding.code)).toContain('orchestrate_efficiency');
  });

  it('fails with spawn_fail (never unjailed) when bwrap is missing, reported as orchestrate_failed; enabled=false withdraws the tool', async () => {
    const { rpc, dataDir } = await orchestrateDaemon();
    await rpc.call('config.patch', { orchestrate: { bwrapPath: join(dataDir, 'no-such-bwrap') } });
    const script = `import fs from 'node:fs'; fs.writeFileSync('/workspace/unjailed.txt', 'ran');`;
    const run = await rpc.call<{ runId: string; sessionKey: string }>('session.spawn', {
      parentKey: 'default:rpc:ops',
      task: orchestrateTask(script),
      agentId: 'orch',
    });
    expect((await ended(rpc, run.runId)).status).toBe('completed');
    expect(existsSync(join(dataDir, 'workspaces', 'orch', 'unjailed.txt'))).toBe(false);
    const report = await eventually(async () => {
      const explained = await rpc.call<{ orchestrate?: Json[]; likelyRootCause: { code: string } }>(
        'obs.explain',
        { sessionKey: run.sessionKey },
      );
      return explained.orchestrate?.length ? explained : undefined;
    });
    expect(report.orchestrate?.[0]).toMatchObject({ outcome: 'failure', failureClass: 'spawn_fail' });
    expect(report.likelyRootCause.code).toBe('orchestrate_failed');

    await rpc.call('config.patch', { orchestrate: { enabled: false } });
    const off = await rpc.call<{ runId: string }>('session.spawn', {
      parentKey: 'default:rpc:ops',
      task: orchestrateTask('console.log(1)'),
      agentId: 'orch',
    });
    expect(String((await ended(rpc, off.runId)).response)).toContain('Tool orchestrate failed');
  });

  it('web_search answers "not configured" until config.patch sets orchestrate.webSearch, then asks that SearXNG', async () => {
    const { rpc } = await orchestrateDaemon();
    const queries: string[] = [];
    // On loopback: the operator's endpoint may be private, unlike web_fetch's targets.
    const searxng = await listenLocal((request, response) => {
      const url = new URL(request.url ?? '/', 'http://searxng');
      queries.push(`${url.pathname}?${url.searchParams.get('q')}&${url.searchParams.get('format')}`);
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({ results: [{ url: 'https://found.example/', title: 'Found', content: 'it' }] }),
      );
    });
    onTestFinished(searxng.close);
    const script = `
      import { invoke } from '/agentd/orch.mjs';
      const out = await invoke('web_search', { query: 'agentd daemon' }).then((v) => v, (e) => e.message);
      console.log(JSON.stringify(out));
    `;
    const searchOnce = async () => {
      const run = await rpc.call<{ runId: string; sessionKey: string }>('session.spawn', {
        parentKey: 'default:rpc:ops',
        task: orchestrateTask(script),
        agentId: 'orch',
      });
      expect((await ended(rpc, run.runId)).status).toBe('completed');
      const history = await rpc.call<{ messages: Array<{ role: string; content: string }> }>(
        'session.history',
        { key: run.sessionKey },
      );
      const tool = JSON.parse(history.messages.find((message) => message.role === 'tool')?.content ?? '{}');
      return JSON.parse(String(tool.stdout));
    };
    expect(await searchOnce()).toBe(
      'web search is not configured: set orchestrate.webSearch.url to a SearXNG instance',
    );
    await rpc.call('config.patch', { orchestrate: { webSearch: { url: searxng.url } } });
    expect(await searchOnce()).toEqual({
      query: 'agentd daemon',
      results: [{ url: 'https://found.example/', title: 'Found', content: 'it' }],
    });
    expect(queries).toEqual(['/search?agentd daemon&json']);
  });

  it.each([
    ['run.kill', (runId: string) => ({ rootRunId: runId })],
    ['subagent.kill', (runId: string) => ({ target: runId, reason: 'test' })],
  ])('%s kills the jailed script and the sleep it started', async (method, params) => {
    const { rpc } = await orchestrateDaemon();
    const marker = String(40_000 + Math.floor(Math.random() * 20_000));
    const script = `
      import { spawn } from 'node:child_process';
      spawn('sleep', ['${marker}'], { detached: true, stdio: 'ignore' }).unref();
      setInterval(() => {}, 1000);
    `;
    const run = await rpc.call<{ runId: string }>('session.spawn', {
      parentKey: 'default:rpc:ops',
      task: orchestrateTask(script),
      agentId: 'orch',
    });
    const pids = await eventually(async () => {
      const found = pidsOf('sleep', marker);
      return found.length > 0 ? found : undefined;
    }, 30_000);
    expect(await rpc.call(method, params(run.runId))).toMatchObject({ killed: 1 });
    expect((await ended(rpc, run.runId)).status).toBe('killed');
    await eventually(async () => (pidsOf('sleep', marker).length === 0 ? true : undefined));
    for (const pid of pids) expect(alive(pid)).toBe(false);
  });
});
