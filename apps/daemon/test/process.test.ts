import { type ChildProcess, execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { cliNodeArgs, type DaemonProcess, daemonPool } from './helpers.js';

const run = promisify(execFile);
const nodeArgs = cliNodeArgs;

const pool = daemonPool('agentd-cli-');
afterEach(() => pool.cleanup());

/** Starts `agentd start` as a real process (no admin token unless `env` names one). */
function startProcess(dataDir: string, env: NodeJS.ProcessEnv = {}): Promise<DaemonProcess> {
  return pool.startProcess(dataDir, { AGENTD_ADMIN_TOKEN: '', ...env });
}

/** `agentd call system.ping --url <url> --token <token>` as a real process. */
function ping(url: string, token: string) {
  return run(process.execPath, [...nodeArgs, 'call', 'system.ping', '--url', url, '--token', token]);
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

// Each test starts real processes (sources through tsx); allow a loaded machine time.
describe('agentd CLI', { timeout: 120_000 }, () => {
  it('prints a bootstrap token once, serves calls, and shuts down gracefully on SIGTERM', async () => {
    const dataDir = pool.tempDir();
    const first = await startProcess(dataDir);
    const token = /agd_[A-Za-z0-9_-]+/.exec(first.stdout())?.[0];
    expect(token).toBeDefined();

    const pong = await ping(first.url, token!);
    expect(JSON.parse(pong.stdout)).toMatchObject({ pong: true });

    const denied = await ping(first.url, 'x')
      .then(() => 0)
      .catch((e: { code: number }) => e.code);
    expect(denied).toBe(1);

    const exit = exited(first.child);
    first.child.kill('SIGTERM');
    expect(await exit).toBe(0);
    const log = readFileSync(join(dataDir, 'logs', 'agentd.log'), 'utf8');
    expect(log).toMatch(/"shutdownDurationMs":\d+/);
    expect(log).not.toContain(token!);

    // The second start finds the stored (hashed) token and prints none.
    const second = await startProcess(dataDir);
    expect(second.stdout()).not.toMatch(/agd_/);
    const again = await run(process.execPath, [...nodeArgs, 'call', 'system.ping', '--url', second.url], {
      env: { ...process.env, AGENTD_TOKEN: token! },
    });
    expect(JSON.parse(again.stdout)).toMatchObject({ pong: true });
  });

  it('creates a token from the CLI that a running daemon accepts at once', async () => {
    const dataDir = pool.tempDir();
    const started = await startProcess(dataDir, {
      AGENTD_ADMIN_TOKEN: 'cli-admin-token-0123456789abcdef0123',
    });
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
      answer = await ping(started.url, token)
        .then((r) => JSON.parse(r.stdout))
        .catch(() => new Promise((resolve) => setTimeout(() => resolve(undefined), 100)));
    }
    expect(answer).toMatchObject({ pong: true });
  });

  it('prints help and refuses unknown commands with exit code 2', async () => {
    const help = await run(process.execPath, [...nodeArgs, '--help']);
    expect(help.stdout).toContain('agentd start');
    expect(help.stdout).toContain('agentd token create');
    expect(help.stdout).toContain('agentd call');
    const bad = await run(process.execPath, [...nodeArgs, 'fly']).catch((e: { code: number }) => e.code);
    expect(bad).toBe(2);
  });
});
