import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const cli = join(import.meta.dirname, '..', 'src', 'cli.ts');
const nodeArgs = ['--import', 'tsx', cli];

interface Started {
  child: ChildProcess;
  url: string;
  stdout: () => string;
}

/** Starts `agentd start` as a real process and waits for its listening line. */
function startProcess(dataDir: string, env: NodeJS.ProcessEnv = {}): Promise<Started> {
  const child = spawn(process.execPath, [...nodeArgs, 'start', '--data-dir', dataDir, '--port', '0'], {
    env: { ...process.env, AGENTD_ADMIN_TOKEN: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk) => {
    out += chunk;
  });
  return new Promise((resolve, reject) => {
    // A hang guard, not a speed check: a real process under tsx on a loaded 2-core machine is slow.
    const timer = setTimeout(() => reject(new Error(`daemon did not start: ${err}`)), 60_000);
    child.stderr?.on('data', (chunk) => {
      err += chunk;
      const match = /agentd listening on (http:\/\/[^\s]+)/.exec(err);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve({ child, url: match[1], stdout: () => out });
      }
    });
    child.once('exit', (code) => reject(new Error(`daemon exited ${code}: ${err}`)));
  });
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

let dataDir: string;
let running: ChildProcess | undefined;
afterEach(() => {
  running?.kill('SIGKILL');
  running = undefined;
  rmSync(dataDir, { recursive: true, force: true });
});

// Each test starts real processes (sources through tsx); allow a loaded machine time.
describe('agentd CLI', { timeout: 120_000 }, () => {
  it('prints a bootstrap token once, serves calls, and shuts down gracefully on SIGTERM', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'agentd-cli-'));
    const first = await startProcess(dataDir);
    running = first.child;
    const token = /agd_[A-Za-z0-9_-]+/.exec(first.stdout())?.[0];
    expect(token).toBeDefined();

    const ping = await run(process.execPath, [
      ...nodeArgs,
      'call',
      'system.ping',
      '--url',
      first.url,
      '--token',
      token!,
    ]);
    expect(JSON.parse(ping.stdout)).toMatchObject({ pong: true });

    const denied = await run(process.execPath, [
      ...nodeArgs,
      'call',
      'system.ping',
      '--url',
      first.url,
      '--token',
      'x',
    ])
      .then(() => 0)
      .catch((e: { code: number }) => e.code);
    expect(denied).toBe(1);

    const exit = exited(first.child);
    first.child.kill('SIGTERM');
    expect(await exit).toBe(0);
    running = undefined;
    const log = readFileSync(join(dataDir, 'logs', 'agentd.log'), 'utf8');
    expect(log).toMatch(/"shutdownDurationMs":\d+/);
    expect(log).not.toContain(token!);

    // The second start finds the stored (hashed) token and prints none.
    const second = await startProcess(dataDir);
    running = second.child;
    expect(second.stdout()).not.toMatch(/agd_/);
    const again = await run(process.execPath, [...nodeArgs, 'call', 'system.ping', '--url', second.url], {
      env: { ...process.env, AGENTD_TOKEN: token! },
    });
    expect(JSON.parse(again.stdout)).toMatchObject({ pong: true });
  });

  it('creates a token from the CLI that a running daemon accepts at once', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'agentd-cli-'));
    const started = await startProcess(dataDir, {
      AGENTD_ADMIN_TOKEN: 'cli-admin-token-0123456789abcdef0123',
    });
    running = started.child;
    expect(started.stdout()).not.toMatch(/agd_/);
    const created = await run(process.execPath, [
      ...nodeArgs,
      'token',
      'create',
      '--scopes',
      'rpc',
      '--data-dir',
      dataDir,
    ]);
    const token = created.stdout.trim();
    expect(token).toMatch(/^agd_/);
    // SIGHUP makes the daemon reload; allow it a moment.
    let answer: unknown;
    for (let attempt = 0; attempt < 50 && !answer; attempt++) {
      answer = await run(process.execPath, [
        ...nodeArgs,
        'call',
        'system.ping',
        '--url',
        started.url,
        '--token',
        token,
      ])
        .then((r) => JSON.parse(r.stdout))
        .catch(() => new Promise((resolve) => setTimeout(() => resolve(undefined), 100)));
    }
    expect(answer).toMatchObject({ pong: true });
  });

  it('prints help and refuses unknown commands with exit code 2', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'agentd-cli-'));
    const help = await run(process.execPath, [...nodeArgs, '--help']);
    expect(help.stdout).toContain('agentd start');
    expect(help.stdout).toContain('agentd token create');
    expect(help.stdout).toContain('agentd call');
    const bad = await run(process.execPath, [...nodeArgs, 'fly']).catch((e: { code: number }) => e.code);
    expect(bad).toBe(2);
  });
});
