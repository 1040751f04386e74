import { type ChildProcess, execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, alive, cliNodeArgs, daemonPool, eventually } from './helpers.js';

const run = promisify(execFile);
const pool = daemonPool('agentd-shutdown-');
const orphans: number[] = [];
afterEach(async () => {
  // A daemon that outlived its parent is not a child of this process: kill it by pid.
  for (const pid of orphans.splice(0)) if (alive(pid)) process.kill(pid, 'SIGKILL');
  await pool.cleanup();
});

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/**
 * An intermediate parent: starts `agentd start` with stdout and stderr as pipes, waits for the
 * listening line, prints the daemon's pid and exits, so nobody holds the pipes' other ends.
 */
const PARENT = `
import { spawn } from 'node:child_process';
const [execPath, dataDir, ...nodeArgs] = process.argv.slice(1);
const child = spawn(execPath, [...nodeArgs, 'start', '--data-dir', dataDir, '--port', '0'], {
  stdio: ['ignore', 'pipe', 'pipe'],
  detached: true,
});
let err = '';
child.stderr.on('data', (chunk) => {
  err += chunk;
  if (/agentd listening on/.test(err)) {
    process.stdout.write(String(child.pid));
    process.exit(0);
  }
});
child.once('exit', (code) => {
  process.stderr.write('daemon exited ' + code + ': ' + err);
  process.exit(1);
});
`;

// Real processes through tsx on a loaded machine; the waits below are hang guards only.
describe('agentd start shutdown', { timeout: 120_000 }, () => {
  it('ends the process on SIGTERM after the parent holding its stdout and stderr pipes has exited', async () => {
    const dataDir = pool.tempDir();
    const { stdout } = await run(
      process.execPath,
      ['--input-type=module', '-e', PARENT, process.execPath, dataDir, ...cliNodeArgs],
      { env: { ...process.env, AGENTD_ADMIN_TOKEN: ADMIN_TOKEN }, timeout: 60_000 },
    );
    const pid = Number(stdout.trim());
    expect(pid).toBeGreaterThan(0);
    orphans.push(pid);
    expect(alive(pid)).toBe(true);

    process.kill(pid, 'SIGTERM');
    await eventually(async () => (alive(pid) ? undefined : true), 30_000);
    const log = readFileSync(join(dataDir, 'logs', 'agentd.log'), 'utf8');
    expect(log).toContain('shutdown complete');
  });

  it('ends the process on SIGTERM after its parent destroyed the stdout and stderr pipes', async () => {
    const dataDir = pool.tempDir();
    const daemon = await pool.startProcess(dataDir, { AGENTD_ADMIN_TOKEN: ADMIN_TOKEN });
    daemon.child.stdout?.destroy();
    daemon.child.stderr?.destroy();
    const exit = exited(daemon.child);
    daemon.child.kill('SIGTERM');
    expect(await exit).toBe(0);
    expect(readFileSync(join(dataDir, 'logs', 'agentd.log'), 'utf8')).toContain('shutdown complete');
  });
});
