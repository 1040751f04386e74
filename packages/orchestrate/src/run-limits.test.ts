import { execFileSync, spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { alive, orchestrateFixture, pidsOf } from '../test/helpers.js';
import { systemJailArgs } from './internal/jail.js';
import { limitedCommand } from './internal/run-limits.js';

let fixture: Awaited<ReturnType<typeof orchestrateFixture>> | undefined;
afterEach(async () => {
  await fixture?.cleanup();
  fixture = undefined;
});

/** Processes on the host right now. */
const hostProcesses = () => readdirSync('/proc').filter((entry) => /^\d+$/.test(entry)).length;

/** Samples the host's process count every 20 ms while `work` runs; answers the peak. */
async function peakProcesses(work: () => Promise<unknown>): Promise<number> {
  let peak = hostProcesses();
  const timer = setInterval(() => {
    peak = Math.max(peak, hostProcesses());
    // The host can still start a process while the jail is full.
    execFileSync('true');
  }, 20);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return peak;
}

/** A script that tries to start 300 detached processes, then says how many it got (a refused fork is slow). */
const FORK_BOMB = `
  import { spawn } from 'node:child_process';
  let started = 0;
  let refused = 0;
  for (let i = 0; i < 300; i++) {
    try {
      const child = spawn('sleep', ['61'], { detached: true, stdio: 'ignore' });
      child.on('error', () => { refused++; });
      child.unref();
      if (child.pid) started++;
    } catch { refused++; }
  }
  await new Promise((resolve) => setTimeout(resolve, 500));
  console.log(JSON.stringify({ started, refused }));
`;

describe('orchestrate: process and memory limits', () => {
  it('caps a fork bomb in the real jail at maxProcesses; the host keeps starting processes', async () => {
    fixture = await orchestrateFixture({ orchestrate: { maxProcesses: 48 } });
    const before = hostProcesses();
    let result: Awaited<ReturnType<NonNullable<typeof fixture>['runScript']>> | undefined;
    const peak = await peakProcesses(async () => {
      result = await fixture?.runScript({ language: 'js', script: FORK_BOMB });
    });
    expect(result).toMatchObject({ exitCode: 0, outcome: 'success' });
    const { started, refused } = JSON.parse(result?.stdout ?? '{}');
    expect(started).toBeLessThan(48);
    expect(started + refused).toBe(300);
    expect(refused).toBeGreaterThan(250);
    // The jail's tasks (the Node and its sleeps) stay under the cap; other tests may add a few.
    expect(peak - before).toBeLessThan(48 + 20);
    // The jail took its processes with it.
    for (let i = 0; i < 100 && pidsOf('sleep', '61').some(alive); i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(pidsOf('sleep', '61').filter(alive)).toEqual([]);
  }, 60_000);

  it('stops a script allocating past maxMemoryMb', async () => {
    fixture = await orchestrateFixture({ orchestrate: { maxMemoryMb: 256 } });
    const result = await fixture.runScript({
      language: 'js',
      script: `
        const held = [];
        for (let i = 0; i < 16; i++) held.push(Buffer.alloc(64 * 1024 * 1024, 1));
        console.log('allocated', held.length);
      `,
    });
    expect(result.outcome).toBe('failure');
    expect(result.stdout).not.toContain('allocated');
  }, 60_000);

  it('caps a normal user’s jail with RLIMIT_NPROC counted in the jail’s own user namespace', async () => {
    // The mechanism a daemon that is not root gets: bwrap as uid 65534 (nobody), prlimit inside.
    const command = await limitedCommand(
      'bwrap',
      [...systemJailArgs(), '--', '/bin/sh', '-c', 'for i in $(seq 200); do sleep 62 & done; wait'],
      { maxProcesses: 24, maxMemoryBytes: 512 * 1024 * 1024 },
      'nproc-test',
    );
    // As root the cgroup wrapper comes first; for this check, only the jail part is run.
    const bwrapAt = command.args.indexOf('bwrap');
    const argv = command.mechanism === 'cgroup' ? command.args.slice(bwrapAt + 1) : command.args;
    await command.release();
    const child = spawn('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', 'bwrap', ...argv], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const closed = new Promise((resolve) => child.once('close', resolve));
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const before = hostProcesses();
    let peak = before;
    let sleeps = 0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, hostProcesses());
      sleeps = Math.max(sleeps, pidsOf('sleep', '62').length);
    }, 10);
    // The shell gives up at its first refused fork; the jail then ends, its sleeps with it.
    await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 10_000))]);
    clearInterval(sampler);
    child.kill('SIGKILL');
    await closed;
    expect(stderr).toMatch(/Cannot fork|Resource temporarily unavailable/);
    expect(sleeps).toBeLessThan(24);
    expect(peak - before).toBeLessThan(24 + 20);
    for (let i = 0; i < 100 && pidsOf('sleep', '62').some(alive); i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(pidsOf('sleep', '62').filter(alive)).toEqual([]);
  }, 30_000);
});
