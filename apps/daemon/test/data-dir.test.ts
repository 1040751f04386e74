import { execFile } from 'node:child_process';
import { chmodSync, lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { isStorageError } from '@agentd/storage';
import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, cliNodeArgs, daemonPool, rpcClient } from './helpers.js';

const run = promisify(execFile);
const pool = daemonPool('agentd-datadir-');
afterEach(() => pool.cleanup());

/** Every path under `root` (not following symlinks), with its permission bits. */
function modes(root: string): Array<{ path: string; mode: number; directory: boolean }> {
  const found: Array<{ path: string; mode: number; directory: boolean }> = [];
  const visit = (path: string) => {
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) return;
    found.push({ path, mode: stat.mode & 0o777, directory: stat.isDirectory() });
    if (stat.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
  };
  visit(root);
  return found;
}

/** What an older build left: directories 0755, files 0644, git's objects 0444. */
function makeReadableByAll(root: string): void {
  for (const entry of modes(root)) {
    if (entry.directory) chmodSync(entry.path, 0o755);
    else chmodSync(entry.path, entry.path.includes(`${join('.git', 'objects')}`) ? 0o444 : 0o644);
  }
}

function readableByOthers(root: string): string[] {
  return modes(root)
    .filter((entry) => (entry.mode & 0o077) !== 0)
    .map((entry) => `${entry.path} ${entry.mode.toString(8)}`);
}

function logLines(dataDir: string): Array<Record<string, unknown>> {
  return readFileSync(join(dataDir, 'logs', 'agentd.log'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('data directory privacy', { timeout: 120_000 }, () => {
  it('repairs a data directory readable by other users at start, saying so with a count, and keeps new files private', async () => {
    const dataDir = pool.tempDir();
    const first = await pool.start(dataDir);
    await rpcClient(first.url).call('config.patch', { daemon: { logLevels: { gateway: 'debug' } } });
    await first.stop();

    makeReadableByAll(dataDir);
    const readable = readableByOthers(dataDir);
    expect(readable.some((entry) => entry.includes(join('.git', 'objects')))).toBe(true);
    expect(readable.some((entry) => entry.endsWith('agentd.db 644'))).toBe(true);

    const second = await pool.start(dataDir);
    expect(readableByOthers(dataDir)).toEqual([]);
    const repaired = logLines(dataDir).filter((line) => line.msg === 'data directory modes repaired');
    expect(repaired).toHaveLength(1);
    expect(repaired[0]?.count).toBe(readable.length);
    // Git's objects stay read-only for the owner: nothing gains a write or execute bit.
    const object = modes(join(dataDir, '.git', 'objects')).find((entry) => !entry.directory);
    expect(object?.mode).toBe(0o400);

    // Files created from now on, git's objects of a config change included, are owner-only.
    await rpcClient(second.url).call('config.patch', { daemon: { logLevels: { gateway: 'info' } } });
    await second.stop();
    expect(readableByOthers(dataDir)).toEqual([]);
    for (const name of ['agentd.db', 'config.yaml']) {
      expect(lstatSync(join(dataDir, name)).mode & 0o777).toBe(0o600);
    }
    expect(lstatSync(join(dataDir, 'logs', 'agentd.log')).mode & 0o777).toBe(0o600);
  });

  it('starts on a private data directory without a repair line', async () => {
    const dataDir = pool.tempDir();
    const daemon = await pool.start(dataDir);
    await daemon.stop();
    expect(readableByOthers(dataDir)).toEqual([]);
    expect(logLines(dataDir).some((line) => line.msg === 'data directory modes repaired')).toBe(false);
  });
});

describe('one daemon per data directory', { timeout: 120_000 }, () => {
  it('refuses a second daemon in the same process, naming the pid, and starts again after stop', async () => {
    const dataDir = pool.tempDir();
    const first = await pool.start(dataDir);
    const error = await pool.start(dataDir).catch((caught: unknown) => caught);
    expect(isStorageError(error, 'DATA_DIR_LOCKED')).toBe(true);
    expect((error as Error).message).toContain(`in use by agentd pid ${process.pid}`);
    // The first daemon still serves, and its data dir was not touched by the refused start.
    expect(await rpcClient(first.url).call('system.ping')).toMatchObject({ pong: true });
    await first.stop();

    const again = await pool.start(dataDir);
    expect(await rpcClient(again.url).call('system.ping')).toMatchObject({ pong: true });
  });

  it('makes a second `agentd start` on the same data dir exit non-zero at once, naming the running pid', async () => {
    const dataDir = pool.tempDir();
    const first = await pool.startProcess(dataDir, { AGENTD_ADMIN_TOKEN: ADMIN_TOKEN });
    const pidFile = readFileSync(join(dataDir, 'agentd.pid'), 'utf8');

    const second = await run(
      process.execPath,
      [...cliNodeArgs, 'start', '--data-dir', dataDir, '--port', '0'],
      { env: { ...process.env, AGENTD_ADMIN_TOKEN: ADMIN_TOKEN }, timeout: 60_000 },
    ).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    );
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`in use by agentd pid ${first.child.pid}`);
    expect(readFileSync(join(dataDir, 'agentd.pid'), 'utf8')).toBe(pidFile);
    expect(await rpcClient(first.url).call('system.ping')).toMatchObject({ pong: true });
  });

  it('takes over the lock of a daemon killed with SIGKILL, saying so in the log', async () => {
    const dataDir = pool.tempDir();
    // Started with a permissive umask (this process's is 077 once an in-process daemon ran):
    // the daemon sets its own, so what it creates is owner-only all the same.
    const previous = process.umask(0o022);
    const first = await pool
      .startProcess(dataDir, { AGENTD_ADMIN_TOKEN: ADMIN_TOKEN })
      .finally(() => process.umask(previous));
    expect(readableByOthers(dataDir)).toEqual([]);
    const killed = new Promise((resolve) => first.child.once('exit', resolve));
    first.child.kill('SIGKILL');
    await killed;

    const second = await pool.start(dataDir);
    expect(await rpcClient(second.url).call('system.ping')).toMatchObject({ pong: true });
    const takeover = logLines(dataDir).find((line) => line.msg === 'took over a stale data directory lock');
    expect(takeover?.pid).toBe(first.child.pid);
  });
});
