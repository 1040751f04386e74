import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDirs } from '@agentd/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import { acquireDataDirLock, type DataDirLock } from './data-dir-lock.js';
import { isStorageError, type StorageError } from './errors.js';
import { processStartTime } from './internal/process-identity.js';

const dirs = tempDirs('agentd-lock-');
const locks: DataDirLock[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  for (const lock of locks.splice(0)) lock.release();
  dirs.removeAll();
});

function acquire(dataDir: string): DataDirLock {
  const lock = acquireDataDirLock({ dataDir });
  locks.push(lock);
  return lock;
}

function lockError(dataDir: string): StorageError {
  try {
    acquire(dataDir);
  } catch (error) {
    expect(isStorageError(error)).toBe(true);
    return error as StorageError;
  }
  throw new Error('the lock was taken twice');
}

/** The pid of a process that has exited (a real one, so the pid was really used). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid as number;
}

const processStartKnown = processStartTime(process.pid) !== undefined;

describe('acquireDataDirLock', () => {
  it('writes a private lock file naming this process and removes it on release', () => {
    const dataDir = dirs.make();
    const lock = acquire(dataDir);
    expect(lock.path).toBe(join(dataDir, 'agentd.lock'));
    expect(JSON.parse(readFileSync(lock.path, 'utf8'))).toMatchObject({ pid: process.pid });
    expect(statSync(lock.path).mode & 0o777).toBe(0o600);
    expect(lock.replaced).toBeUndefined();
    lock.release();
    expect(existsSync(lock.path)).toBe(false);
    lock.release();
  });

  it('refuses a second holder in the same process, naming the pid, until the first releases', () => {
    const dataDir = dirs.make();
    const first = acquire(dataDir);
    const error = lockError(dataDir);
    expect(error.code).toBe('DATA_DIR_LOCKED');
    expect(error.message).toContain(`pid ${process.pid}`);
    expect(error.message).toContain(dataDir);
    expect(error.data).toMatchObject({ pid: process.pid, dataDir });
    first.release();
    expect(acquire(dataDir).holder.pid).toBe(process.pid);
  });

  it('does not remove a later holder’s lock when an earlier holder releases again', () => {
    const dataDir = dirs.make();
    const first = acquire(dataDir);
    first.release();
    const second = acquire(dataDir);
    first.release();
    expect(JSON.parse(readFileSync(second.path, 'utf8'))).toMatchObject({ token: second.holder.token });
  });

  it('refuses while another live process holds it and takes it over after that process is killed with SIGKILL', async () => {
    const dataDir = dirs.make();
    const entry = fileURLToPath(new URL('./index.ts', import.meta.url));
    const holder = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        `import { acquireDataDirLock } from ${JSON.stringify(entry)};
acquireDataDirLock({ dataDir: process.argv[1] });
process.stdout.write('locked');
setInterval(() => undefined, 1000);`,
        dataDir,
      ],
      { cwd: fileURLToPath(new URL('..', import.meta.url)), stdio: ['ignore', 'pipe', 'inherit'] },
    );
    children.push(holder);
    await new Promise<void>((resolve, reject) => {
      holder.stdout?.on('data', () => resolve());
      holder.once('exit', (code) => reject(new Error(`the holder exited ${code}`)));
    });

    const error = lockError(dataDir);
    expect(error.code).toBe('DATA_DIR_LOCKED');
    expect(error.message).toContain(`pid ${holder.pid}`);

    const gone = new Promise((resolve) => holder.once('exit', resolve));
    holder.kill('SIGKILL');
    await gone;
    const lock = acquire(dataDir);
    expect(lock.replaced?.pid).toBe(holder.pid);
    expect(JSON.parse(readFileSync(lock.path, 'utf8'))).toMatchObject({ pid: process.pid });
  });

  it('takes over a lock whose process is gone', async () => {
    const dataDir = dirs.make();
    const pid = await deadPid();
    writeFileSync(
      join(dataDir, 'agentd.lock'),
      JSON.stringify({ pid, hostname: '', startedAt: '2020-01-01T00:00:00.000Z', token: 'old' }),
    );
    const lock = acquire(dataDir);
    expect(lock.replaced).toMatchObject({ pid, token: 'old' });
  });

  it.skipIf(!processStartKnown)(
    'takes over a lock whose pid now belongs to another process (a different start time)',
    async () => {
      const dataDir = dirs.make();
      const other = spawn(process.execPath, ['-e', 'setInterval(() => undefined, 1000)']);
      children.push(other);
      await new Promise((resolve) => other.once('spawn', resolve));
      const pid = other.pid as number;
      const realStart = processStartTime(pid);
      expect(realStart).toBeDefined();
      // The recorded holder had this pid but started at another time: the pid was reused.
      writeFileSync(
        join(dataDir, 'agentd.lock'),
        JSON.stringify({ pid, processStart: `${Number(realStart) + 1}`, hostname: '', token: 'old' }),
      );
      expect(acquire(dataDir).replaced?.pid).toBe(pid);
    },
  );

  it('takes over an unreadable lock file', () => {
    const dataDir = dirs.make();
    writeFileSync(join(dataDir, 'agentd.lock'), 'not json');
    expect(acquire(dataDir).holder.pid).toBe(process.pid);
  });

  it('refuses a lock held from another host, saying which', () => {
    const dataDir = dirs.make();
    writeFileSync(
      join(dataDir, 'agentd.lock'),
      JSON.stringify({
        pid: 1,
        hostname: 'elsewhere.invalid',
        startedAt: '2020-01-01T00:00:00.000Z',
        token: 't',
      }),
    );
    const error = lockError(dataDir);
    expect(error.code).toBe('DATA_DIR_LOCKED');
    expect(error.message).toContain('on host elsewhere.invalid');
  });

  it('fails with LOCK_FAILED when the data directory does not exist', () => {
    const error = lockError(join(dirs.make(), 'missing'));
    expect(error.code).toBe('LOCK_FAILED');
  });
});

describe('processStartTime', () => {
  it.skipIf(!processStartKnown)(
    'answers the same start for one process and none for a gone one',
    async () => {
      expect(processStartTime(process.pid)).toBe(processStartTime(process.pid));
      expect(processStartTime(await deadPid())).toBeUndefined();
    },
  );
});
