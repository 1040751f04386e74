import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { isStorageError } from '@agentd/storage';
import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, cliNodeArgs, daemonPool, rpcClient } from './helpers.js';

const run = promisify(execFile);
const pool = daemonPool('agentd-datadir-');
afterEach(() => pool.cleanup());

function logLines(dataDir: string): Array<Record<string, unknown>> {
  return readFileSync(join(dataDir, 'logs', 'agentd.log'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

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
    const first = await pool.startProcess(dataDir, { AGENTD_ADMIN_TOKEN: ADMIN_TOKEN });
    const killed = new Promise((resolve) => first.child.once('exit', resolve));
    first.child.kill('SIGKILL');
    await killed;

    const second = await pool.start(dataDir);
    expect(await rpcClient(second.url).call('system.ping')).toMatchObject({ pong: true });
    const takeover = logLines(dataDir).find((line) => line.msg === 'took over a stale data directory lock');
    expect(takeover?.pid).toBe(first.child.pid);
  });
});
