import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { alive, orchestrateFixture, pidsOf } from '../test/helpers.js';

let fixture: Awaited<ReturnType<typeof orchestrateFixture>>;
afterEach(async () => {
  await fixture?.cleanup();
});

const signal = () => new AbortController().signal;

describe('orchestrate: happy path', () => {
  it('runs a script that reads through a builtin and calls a routed tool as the lease', async () => {
    fixture = await orchestrateFixture();
    writeFileSync(join(fixture.workspace, 'notes.md'), 'hello from the workspace');
    const result = await fixture.runScript({
      language: 'ts',
      script: `
        import { invoke } from '/agentd/orch.mjs';
        const note: { text: string } = await invoke('read', { path: 'notes.md' });
        const echoed = await invoke('echo', { x: 1, agentId: 'someone-else', sessionKey: 'default:rpc:bob' });
        const listed = await invoke('ls', { path: '/workspace' });
        console.log(JSON.stringify({ text: note.text, echoed, names: listed.entries.map((e) => e.name) }));
      `,
      traceId: 'trace-1',
    });
    expect(result).toMatchObject({ exitCode: 0, outcome: 'success', stdoutTruncated: false });
    expect(result.failureClass).toBeUndefined();
    const printed = JSON.parse(result.stdout);
    expect(printed.text).toBe('hello from the workspace');
    // Identity comes from the lease, never from the script's params.
    expect(printed.echoed).toEqual({ echoed: { x: 1 }, agentId: 'default', runId: fixture.run.runId });
    expect(printed.names).toContain('notes.md');
    expect(fixture.routed[0]?.sessionKey).toBe(fixture.run.sessionKey);
    expect(result.toolCalls).toEqual(
      expect.arrayContaining([
        { tool: 'read', capability: 'orchestrate', decision: 'allowed', count: 1 },
        { tool: 'echo', capability: 'echo', decision: 'allowed', count: 1 },
      ]),
    );
    expect(result.resultRefs.count).toBe(3);
    const summary = fixture.events.find((entry) => entry.event === 'orchestrate:run_summary');
    expect(summary?.payload).toMatchObject({
      sessionKey: fixture.run.sessionKey,
      traceId: 'trace-1',
      runId: result.runId,
      leaseId: result.leaseId,
      exitCode: 0,
      resultRefs: result.resultRefs,
    });
    expect(summary?.payload).not.toHaveProperty('failureClass');
    const lease = await fixture.autonomy.leases.get(result.leaseId as string);
    expect(lease).toMatchObject({ runId: fixture.run.runId, agentId: 'default' });
  });
});

describe('orchestrate: the calling turn', () => {
  it("routes a script's tool calls in the memory tenant of the turn that called the tool", async () => {
    fixture = await orchestrateFixture();
    const script = `
      import { invoke } from '/agentd/orch.mjs';
      await invoke('echo', { x: 1, memoryTenant: 'default', tenant: 'default' });
    `;
    const context = { agentId: 'default', sessionKey: fixture.run.sessionKey, signal: signal() };
    const tool = fixture.service.tool();
    const tenantRun = await tool.handler({ script, language: 'js' }, { ...context, memoryTenant: 'acme' });
    expect(tenantRun).toMatchObject({ exitCode: 0 });
    await tool.handler({ script, language: 'js' }, context);
    // The tenant is the turn's, whatever the script names; the operator's turn carries none.
    expect(fixture.routed.map((call) => call.memoryTenant)).toEqual(['acme', undefined]);
    expect(fixture.routed[0]?.args).toEqual({ x: 1 });
  });
});

describe('orchestrate: the jail', () => {
  it('refuses the data directory, the network, /etc/shadow, writes outside the workspace and denylisted tools', async () => {
    fixture = await orchestrateFixture();
    const server = createServer((socket) => socket.end('reached'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    process.env.ORCH_TEST_API_KEY = 'sk-must-not-leak';
    try {
      const dataFile = join(fixture.dataDir, 'agentd.db');
      expect(existsSync(dataFile)).toBe(true);
      const result = await fixture.service.run({
        language: 'js',
        script: `
          import { invoke } from '/agentd/orch.mjs';
          import fs from 'node:fs';
          import net from 'node:net';
          const out = {};
          const attempt = (name, fn) => { try { fn(); out[name] = 'allowed'; } catch (e) { out[name] = e.code ?? e.message; } };
          attempt('dataDir', () => fs.readdirSync(${JSON.stringify(fixture.dataDir)}));
          attempt('dataFile', () => fs.readFileSync(${JSON.stringify(dataFile)}));
          attempt('shadow', () => fs.readFileSync('/etc/shadow'));
          attempt('writeEtc', () => fs.writeFileSync('/etc/agentd-jail-test', 'x'));
          attempt('writeUsr', () => fs.writeFileSync('/usr/agentd-jail-test', 'x'));
          attempt('writeRoot', () => fs.writeFileSync('/agentd-jail-test', 'x'));
          attempt('writeData', () => fs.writeFileSync(${JSON.stringify(join(fixture.dataDir, 'planted'))}, 'x'));
          attempt('writeWorkspace', () => fs.writeFileSync('/workspace/ok.txt', 'fine'));
          out.net = await new Promise((resolve) => {
            const socket = net.connect(${port}, '127.0.0.1');
            socket.on('data', () => resolve('allowed'));
            socket.on('error', (e) => resolve(e.code));
          });
          out.internet = await new Promise((resolve) => {
            const socket = net.connect(80, '1.1.1.1');
            socket.on('connect', () => resolve('allowed'));
            socket.on('error', (e) => resolve(e.code));
          });
          for (const tool of ['subagent_spawn', 'orchestrate', 'not_for_you', 'no_such_tool']) {
            out[tool] = await invoke(tool, {}).then(() => 'allowed', (e) => e.data?.reason ?? e.message);
          }
          out.escape = await invoke('read', { path: '../../etc/passwd' }).then(() => 'allowed', (e) => e.message);
          out.secret = process.env.ORCH_TEST_API_KEY ?? null;
          out.lease = typeof process.env.AGENTD_ORCH_LEASE;
          console.log(JSON.stringify(out));
        `,
        agentId: 'default',
        sessionKey: fixture.run.sessionKey,
        signal: signal(),
      });
      expect(result.exitCode).toBe(0);
      const out = JSON.parse(result.stdout);
      expect(out).toMatchObject({
        dataDir: 'ENOENT',
        dataFile: 'ENOENT',
        shadow: 'ENOENT',
        writeEtc: 'EROFS',
        writeUsr: 'EROFS',
        writeRoot: 'EROFS',
        writeWorkspace: 'allowed',
        net: 'ECONNREFUSED',
        internet: 'ENETUNREACH',
        subagent_spawn: 'denylist',
        orchestrate: 'denylist',
        not_for_you: 'origin',
        no_such_tool: 'capability',
        secret: null,
        lease: 'string',
      });
      expect(out.writeData).not.toBe('allowed');
      expect(out.escape).toMatch(/outside the workspace|does not exist/);
      expect(existsSync(join(fixture.dataDir, 'planted'))).toBe(false);
      expect(readFileSync(join(fixture.workspace, 'ok.txt'), 'utf8')).toBe('fine');
      expect(result.toolCalls).toEqual(
        expect.arrayContaining([
          { tool: 'subagent_spawn', capability: 'subagent_spawn', decision: 'denied_denylist', count: 1 },
          { tool: 'not_for_you', capability: 'not_for_you', decision: 'denied_origin', count: 1 },
          { tool: 'no_such_tool', capability: 'no_such_tool', decision: 'denied_capability', count: 1 },
        ]),
      );
      expect(fixture.routed).toEqual([]);
    } finally {
      delete process.env.ORCH_TEST_API_KEY;
      server.close();
    }
  });

  it('fails with spawn_fail and never runs the script when bwrap is missing', async () => {
    fixture = await orchestrateFixture({ orchestrate: { bwrapPath: '/nonexistent/bwrap' } });
    const result = await fixture.runScript({
      language: 'js',
      script: `import fs from 'node:fs'; fs.writeFileSync('ran.txt', 'unjailed');`,
    });
    expect(result).toMatchObject({ outcome: 'failure', failureClass: 'spawn_fail', exitCode: -1 });
    expect(result.hint).toMatch(/bubblewrap/);
    expect(existsSync(join(fixture.workspace, 'ran.txt'))).toBe(false);
    expect(fixture.events.at(-1)?.payload).toMatchObject({ failureClass: 'spawn_fail' });
  });

  it('fails with spawn_fail when the jail cannot be prepared (no workspace)', async () => {
    fixture = await orchestrateFixture({
      workspaceOf: async () => {
        throw new Error('workspace unavailable');
      },
    });
    const result = await fixture.runScript({
      language: 'js',
      script: 'console.log(1)',
    });
    expect(result).toMatchObject({ failureClass: 'spawn_fail', exitCode: -1 });
    expect(result.hint).toContain('workspace unavailable');
  });

  it('fails with lease_absent outside a sub-agent run', async () => {
    fixture = await orchestrateFixture();
    const result = await fixture.service.run({
      language: 'js',
      script: 'console.log(1)',
      agentId: 'default',
      sessionKey: 'default:rpc:alice',
      signal: signal(),
    });
    expect(result).toMatchObject({ failureClass: 'lease_absent', outcome: 'failure' });
    expect(result.hint).toMatch(/sub-agent run/);
  });
});

describe('orchestrate: limits', () => {
  it('kills a script past its timeout', async () => {
    fixture = await orchestrateFixture({ orchestrate: { timeoutMs: 1500 } });
    const started = Date.now();
    const result = await fixture.runScript({
      language: 'js',
      script: 'setInterval(() => {}, 1000);',
    });
    expect(result).toMatchObject({ failureClass: 'timeout', outcome: 'failure', exitCode: 137 });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('kills a script past the stdout cap and keeps the capped part', async () => {
    fixture = await orchestrateFixture({ orchestrate: { stdoutCapBytes: 4096 } });
    const result = await fixture.runScript({
      language: 'js',
      script: 'const line = "x".repeat(1000) + "\\n"; for (;;) process.stdout.write(line);',
    });
    expect(result).toMatchObject({ failureClass: 'stdout_cap', outcome: 'failure', stdoutTruncated: true });
    expect(result.stdout.length).toBe(4096);
  });

  it('reports a failing script as nonzero_exit', async () => {
    fixture = await orchestrateFixture();
    const result = await fixture.runScript({
      language: 'js',
      script: 'process.exit(3)',
    });
    expect(result).toMatchObject({ failureClass: 'nonzero_exit', exitCode: 3 });
  });

  it('kills the jail and what it started when the run is killed', async () => {
    fixture = await orchestrateFixture();
    const running = fixture.runScript({
      language: 'js',
      script: `
        import { spawn } from 'node:child_process';
        import fs from 'node:fs';
        const child = spawn('sleep', ['987'], { detached: true, stdio: 'ignore' });
        fs.writeFileSync('/workspace/started', 'yes');
        setInterval(() => {}, 1000);
      `,
    });
    const marker = join(fixture.workspace, 'started');
    for (let i = 0; i < 200 && !existsSync(marker); i++) await new Promise((r) => setTimeout(r, 50));
    const sleeps = pidsOf('sleep', '987');
    expect(sleeps.length).toBe(1);
    await fixture.autonomy.kill(fixture.run.runId, 'test');
    const result = await running;
    expect(result.outcome).toBe('failure');
    for (let i = 0; i < 100 && sleeps.some(alive); i++) await new Promise((r) => setTimeout(r, 50));
    expect(sleeps.filter(alive)).toEqual([]);
  });
});
