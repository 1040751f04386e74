import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHttpClient, type HttpClient } from '@agentd/client';
import type { AgentTurnRequest, AgentTurnRunner } from '@agentd/cron-wakegate';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunningDaemon } from '../src/index.js';
import { ADMIN_TOKEN, daemonPool, eventually, rpcFailure, type StartOptions, turnAnswer } from './helpers.js';

interface CronRun {
  ts: number;
  status: string;
  trigger: string;
  catchUp?: boolean;
  scheduledAtMs?: number;
  summary?: string;
  error?: string;
  toolCalls?: number;
  estTurnsSaved?: number;
  rootRunId?: string;
  wakeGate?: { outcome: string; reason?: string };
}

const pool = daemonPool('agentd-sched-');
afterEach(() => pool.cleanup());

const tempDir = pool.tempDir;

/** Starts a daemon in `dataDir` and answers it with an admin client. */
async function start(
  dataDir: string,
  options: StartOptions = {},
): Promise<{ daemon: RunningDaemon; client: HttpClient }> {
  const daemon = await pool.start(dataDir, { env: { PATH: process.env.PATH }, ...options });
  return { daemon, client: createHttpClient({ url: daemon.url, token: ADMIN_TOKEN }) };
}

/** A runner that answers every turn and keeps the requests. */
function recordingRunner(): AgentTurnRunner & { requests: AgentTurnRequest[] } {
  const requests: AgentTurnRequest[] = [];
  return {
    requests,
    runTurn: async (request) => {
      requests.push(request);
      return turnAnswer(request, `handled: ${request.message}`);
    },
  };
}

/** `cron.add` params of a job that sends `message` every `everyMs`. */
function everyJob(name: string, everyMs: number, message = 'm') {
  return { name, message, schedule: { kind: 'interval', everyMs } };
}

async function runsOf(client: HttpClient, jobName: string): Promise<CronRun[]> {
  return ((await client.call('cron.runs', { jobName })) as { runs: CronRun[] }).runs;
}

/** A daemon with a recording runner, an admin client and an `app` client holding an rpc-scoped token. */
async function startWithApp() {
  const runner = recordingRunner();
  const dataDir = tempDir();
  // Learning's daemon-wide `Memory lifecycle` job would be listed beside the ones added here.
  const { daemon, client: admin } = await start(dataDir, {
    agentRunner: runner,
    config: { learning: { enabled: false } },
  });
  const { token } = (await admin.call('tokens.create', { scopes: ['rpc'], id: 'app' })) as {
    token: string;
  };
  return { runner, dataDir, daemon, admin, app: createHttpClient({ url: daemon.url, token }) };
}

describe('cron methods', () => {
  it('runs a job through the injected agent runner and shows it in list, status and runs', async () => {
    const runner = recordingRunner();
    // Learning's daemon-wide `Memory lifecycle` job would be listed beside the one added here.
    const { client } = await start(tempDir(), {
      agentRunner: runner,
      config: { learning: { enabled: false } },
    });
    const created = (await client.call('cron.add', {
      name: 'digest',
      message: 'summarise the day',
      agentId: 'ops',
      schedule: { kind: 'cron', expr: '0 18 * * *', tz: 'Europe/Berlin' },
    })) as { id: string; created: boolean };
    expect(created).toMatchObject({ id: expect.any(String), created: true });
    const { jobs } = (await client.call('cron.list')) as { jobs: Array<Record<string, unknown>> };
    expect(jobs).toEqual([
      expect.objectContaining({
        id: created.id,
        name: 'digest',
        scheduleKind: 'cron',
        expr: '0 18 * * *',
        tz: 'Europe/Berlin',
        enabled: true,
        nextRunAtMs: expect.any(Number),
      }),
    ]);
    expect(await client.call('cron.run', { name: 'digest' })).toEqual({
      triggered: true,
      mode: 'force',
      jobName: 'digest',
    });
    const [run] = await eventually(async () => {
      const runs = await runsOf(client, 'digest');
      return runs.length > 0 ? runs : undefined;
    });
    expect(run).toMatchObject({ status: 'ok', trigger: 'force', summary: 'handled: summarise the day' });
    expect(runner.requests[0]).toMatchObject({
      agentId: 'ops',
      origin: 'cron',
      sessionKey: `cron:${created.id}`,
    });
    expect(await client.call('cron.status', { name: 'digest' })).toMatchObject({
      id: created.id,
      name: 'digest',
      scheduleKind: 'cron',
      enabled: true,
      lastRunAtMs: run!.ts,
    });

    expect(await client.call('cron.update', { name: 'digest', enabled: false })).toMatchObject({
      updated: true,
      enabled: false,
      nextRunAtMs: 0,
    });
    expect((await client.call('cron.list')) as { jobs: unknown[] }).toMatchObject({
      jobs: [{ message: 'summarise the day', enabled: false }],
    });
    expect(await client.call('cron.remove', { name: 'digest' })).toEqual({
      removed: true,
      id: created.id,
      name: 'digest',
    });
    const gone = await rpcFailure(client.call('cron.status', { name: 'digest' }));
    expect([gone.code, gone.message]).toEqual([-32004, 'Job not found: digest']);
  });

  it('runs a job as a turn of the built-in agent runtime when no runner is given', async () => {
    const { client } = await start(tempDir());
    await client.call('cron.add', everyJob('j', 3_600_000, 'summarise the day'));
    await client.call('cron.run', { name: 'j' });
    const [run] = await eventually(async () => {
      const runs = await runsOf(client, 'j');
      return runs.length > 0 ? runs : undefined;
    });
    expect(run).toMatchObject({ status: 'ok' });
    expect(JSON.stringify(run)).toMatch(/offline/i);
  });

  it('answers -32602 naming the field for bad schedules and a force run without a name', async () => {
    const { client } = await start(tempDir());
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ kind: 'cron', expr: '99 * * * *' }, 'schedule.expr'],
      [{ kind: 'cron', expr: '0 9 * * *', tz: 'Atlantis/Capital' }, 'schedule.tz'],
      [{ kind: 'interval', everyMs: 10 }, 'schedule.everyMs'],
      [{ kind: 'once', at: '2000-01-01T00:00:00Z' }, 'schedule.at'],
      [{ kind: 'weekly' }, 'schedule.kind'],
    ];
    for (const [schedule, field] of cases) {
      const error = await rpcFailure(client.call('cron.add', { name: 'x', message: 'm', schedule }));
      expect(error.code).toBe(-32602);
      expect(error.message).toContain(field);
      expect((error.data as { issues: Array<{ path: string[] }> }).issues[0]?.path.join('.')).toBe(field);
    }
    const noName = await rpcFailure(client.call('cron.run', { mode: 'force' }));
    expect([noName.code, noName.message]).toEqual([
      -32602,
      'Invalid params: name: required when mode is force',
    ]);
    await client.call('cron.add', everyJob('x', 1000));
    const duplicate = await rpcFailure(client.call('cron.add', everyJob('x', 1000)));
    expect(duplicate.code).toBe(-32602);
    expect(duplicate.message).toContain('name');
    const missing = await rpcFailure(client.call('cron.runs', { jobName: 'nope' }));
    expect([missing.code, missing.message]).toEqual([-32004, 'Job not found: nope']);
  });

  it('fires every overdue job with mode due', async () => {
    let clock = Date.parse('2026-04-01T10:00:00Z');
    const { client } = await start(tempDir(), {
      now: () => clock,
      agentRunner: recordingRunner(),
    });
    await client.call('cron.add', everyJob('soon', 60_000));
    await client.call('cron.add', everyJob('later', 3_600_000));
    clock += 120_000;
    expect(await client.call('cron.run', { mode: 'due' })).toEqual({
      triggered: true,
      mode: 'due',
      jobNames: ['soon'],
    });
    const [run] = await eventually(async () => {
      const runs = await runsOf(client, 'soon');
      return runs.length > 0 ? runs : undefined;
    });
    expect(run).toMatchObject({ trigger: 'due', status: 'ok', scheduledAtMs: clock - 60_000 });
  });
});

describe('wake-gates through the gateway', () => {
  it('requires admin scope to set or change a gate, and skips in the agent workspace', async () => {
    const { runner, dataDir, admin, app } = await startWithApp();
    const gate = {
      command: process.execPath,
      args: ['-e', 'console.log(JSON.stringify({ wake: false, reason: process.cwd() }))'],
    };
    const schedule = { kind: 'interval', everyMs: 3_600_000 };

    const refused = await rpcFailure(
      app.call('cron.add', { name: 'g', message: 'm', agentId: 'mail', schedule, wakeGate: gate }),
    );
    expect([refused.code, refused.message]).toEqual([-32603, "Insufficient scope: requires 'admin'"]);
    expect(((await app.call('cron.list')) as { jobs: unknown[] }).jobs).toEqual([]);

    await app.call('cron.add', { name: 'g', message: 'm', agentId: 'mail', schedule });
    const change = await rpcFailure(app.call('cron.update', { name: 'g', wakeGate: gate }));
    expect([change.code, change.message]).toEqual([-32603, "Insufficient scope: requires 'admin'"]);
    const removal = await rpcFailure(app.call('cron.update', { name: 'g', wakeGate: null }));
    expect(removal.code).toBe(-32603);
    await app.call('cron.update', { name: 'g', message: 'still allowed' });
    await admin.call('cron.update', { name: 'g', wakeGate: gate });
    expect(
      ((await app.call('cron.list')) as { jobs: Array<{ wakeGate?: unknown }> }).jobs[0]?.wakeGate,
    ).toEqual(gate);
    const moved = await rpcFailure(app.call('cron.update', { name: 'g', agentId: 'other' }));
    expect(moved.message).toBe("Insufficient scope: requires 'admin'");

    await app.call('cron.run', { name: 'g' });
    const [run] = await eventually(async () => {
      const runs = await runsOf(app, 'g');
      return runs.length > 0 ? runs : undefined;
    });
    const workspace = join(dataDir, 'workspaces', 'mail');
    expect(run).toMatchObject({
      status: 'skipped',
      summary: 'wake-gate: skipped',
      toolCalls: 0,
      estTurnsSaved: 1,
      wakeGate: { outcome: 'skip', reason: workspace },
    });
    expect(run?.rootRunId).toMatch(/^root-wakegate-/);
    expect(existsSync(workspace)).toBe(true);
    expect(runner.requests).toHaveLength(0);
  });
});

describe('heartbeat and scheduler methods', () => {
  it('updates the heartbeat into config.yaml, triggers beats and coalesces wakes', async () => {
    const { runner, dataDir, daemon, admin, app } = await startWithApp();

    expect(await app.call('heartbeat.status')).toMatchObject({
      enabled: false,
      intervalMs: 1_800_000,
      queued: 0,
    });
    const denied = await rpcFailure(app.call('heartbeat.trigger', {}));
    expect(denied.message).toBe("Insufficient scope: requires 'admin'");
    const status = (await admin.call('heartbeat.update', {
      enabled: true,
      intervalMs: 600_000,
      agentId: 'ops',
    })) as {
      nextBeatAt: number;
    };
    expect(status).toMatchObject({ enabled: true, intervalMs: 600_000, agentId: 'ops' });
    expect(status.nextBeatAt).toBeGreaterThan(Date.now());
    const yaml = readFileSync(join(dataDir, 'config.yaml'), 'utf8');
    expect(yaml).toMatch(/heartbeat:\n(\s+.*\n)*\s+intervalMs: 600000/);
    const bad = await rpcFailure(admin.call('heartbeat.update', { intervalMs: 5 }));
    expect(bad.code).toBe(-32602);

    expect(await admin.call('heartbeat.trigger', { reason: 'manual' })).toEqual({
      triggered: true,
      coalesced: false,
    });
    await eventually(async () => (runner.requests.length === 1 ? true : undefined));
    expect(runner.requests[0]).toMatchObject({ agentId: 'ops', origin: 'heartbeat' });

    expect(await app.call('scheduler.wake', {})).toEqual({ queued: true, coalesced: false, source: 'agent' });
    expect(await app.call('scheduler.wake', { source: 'cron', text: 'queue is long' })).toEqual({
      queued: true,
      coalesced: true,
      source: 'cron',
    });
    daemon.heartbeat.wakeNow('webhook says hi');
    const beats = await eventually(async () => {
      const history = (await app.call('heartbeat.history', {})) as { beats: Array<{ sources: string[] }> };
      return history.beats.length === 2 ? history.beats : undefined;
    });
    expect(beats[0]?.sources).toEqual(['agent', 'cron', 'webhook']);
    expect(runner.requests[1]?.message).toContain('- queue is long\n- webhook says hi');
  });
});

describe('restart catch-up', { timeout: 120_000 }, () => {
  it('runs a job once after two daemons on the same data dir, however many fires it missed', async () => {
    let clock = Date.parse('2026-06-01T08:00:00Z');
    const dataDir = tempDir();
    const { daemon: first, client } = await start(dataDir, {
      now: () => clock,
      agentRunner: recordingRunner(),
    });
    await client.call('cron.add', everyJob('minutely', 60_000));
    await first.stop();

    clock += 45 * 60_000;
    const runner = recordingRunner();
    const { client: again } = await start(dataDir, { now: () => clock, agentRunner: runner });
    const runs = await eventually(async () => {
      const list = await runsOf(again, 'minutely');
      return list.length > 0 ? list : undefined;
    });
    expect(runs).toEqual([
      expect.objectContaining({
        trigger: 'catch-up',
        catchUp: true,
        status: 'ok',
        scheduledAtMs: Date.parse('2026-06-01T08:01:00Z'),
      }),
    ]);
    expect(runner.requests).toHaveLength(1);
  });

  it('runs a job once after the daemon process is killed and started again', async () => {
    const dataDir = tempDir();
    // No backoff keeps the job on its one-second schedule even if a run errors.
    writeFileSync(join(dataDir, 'config.yaml'), 'cron:\n  retryBackoffMs: [0]\n');
    const launch = () => pool.startProcess(dataDir, { AGENTD_ADMIN_TOKEN: ADMIN_TOKEN });

    const first = await launch();
    const client = createHttpClient({ url: first.url, token: ADMIN_TOKEN });
    await client.call('cron.add', everyJob('tick', 1000));
    await eventually(async () => ((await runsOf(client, 'tick')).length > 0 ? true : undefined));
    const exited = new Promise((resolve) => first.child.once('exit', resolve));
    first.child.kill('SIGKILL');
    await exited;
    const killedAt = Date.now();
    // Down long enough to miss several fires.
    await new Promise((resolve) => setTimeout(resolve, 3500));

    const second = await launch();
    const again = createHttpClient({ url: second.url, token: ADMIN_TOKEN });
    // A run is recorded when it ends, while an overlapping fire's skip is recorded at once: wait
    // for the catch-up's own record, then check it is the first fire after the restart.
    const runs = await eventually(async () => {
      const list = await runsOf(again, 'tick');
      return list.some((run) => run.ts > killedAt && run.trigger === 'catch-up') ? list : undefined;
    });
    const afterRestart = runs.filter((run) => run.ts > killedAt).reverse();
    expect(afterRestart[0]).toMatchObject({ trigger: 'catch-up', catchUp: true });
    expect(afterRestart[0]!.scheduledAtMs).toBeLessThan(killedAt + 1000);
    // Fires after the catch-up are ordinary ones again; missed fires were not replayed one by one.
    await eventually(async () => {
      const list = await runsOf(again, 'tick');
      return list.filter((run) => run.ts > killedAt).length >= 3 ? true : undefined;
    });
    const later = (await runsOf(again, 'tick')).filter((run) => run.ts > killedAt);
    expect(later.filter((run) => run.trigger === 'catch-up')).toHaveLength(1);
    expect(later.filter((run) => run.trigger !== 'catch-up').every((run) => run.trigger === 'schedule')).toBe(
      true,
    );
  });
});
