import { chmodSync, mkdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDirs } from '@agentd/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import { PRIVATE_DATA_DIR_ENTRIES, repairPrivateModes, usePrivateUmask } from './private-modes.js';

const dirs = tempDirs('agentd-modes-');
afterEach(() => dirs.removeAll());

function mode(path: string): number {
  return statSync(path).mode & 0o7777;
}

function file(path: string, fileMode: number): string {
  writeFileSync(path, 'x');
  chmodSync(path, fileMode);
  return path;
}

function dir(path: string, dirMode: number): string {
  mkdirSync(path, { recursive: true });
  chmodSync(path, dirMode);
  return path;
}

/** A data directory as an older build left it: readable by everyone. */
function legacyDataDir(): string {
  const dataDir = dir(dirs.make(), 0o755);
  file(join(dataDir, 'config.yaml'), 0o600);
  file(join(dataDir, 'agentd.db'), 0o644);
  file(join(dataDir, 'agentd.db-wal'), 0o644);
  file(join(dataDir, 'agentd.db-shm'), 0o644);
  dir(join(dataDir, '.git', 'objects', 'ab'), 0o755);
  chmodSync(join(dataDir, '.git', 'objects'), 0o755);
  chmodSync(join(dataDir, '.git'), 0o755);
  file(join(dataDir, '.git', 'objects', 'ab', 'cdef'), 0o444);
  file(join(dataDir, '.git', 'hooks-sample'), 0o755);
  dir(join(dataDir, 'logs'), 0o755);
  file(join(dataDir, 'logs', 'agentd.log'), 0o644);
  dir(join(dataDir, 'obs', 'session-index'), 0o755);
  file(join(dataDir, 'obs', 'session-index', '2024-01-01.jsonl'), 0o640);
  return dataDir;
}

describe('repairPrivateModes', () => {
  it('makes directories 0700 and takes group and other bits off files, adding none', () => {
    const dataDir = legacyDataDir();
    const result = repairPrivateModes({ dataDir });
    expect(result.failures).toEqual([]);
    expect(mode(dataDir)).toBe(0o700);
    expect(mode(join(dataDir, 'config.yaml'))).toBe(0o600);
    expect(mode(join(dataDir, 'agentd.db'))).toBe(0o600);
    expect(mode(join(dataDir, 'agentd.db-wal'))).toBe(0o600);
    expect(mode(join(dataDir, 'agentd.db-shm'))).toBe(0o600);
    expect(mode(join(dataDir, '.git'))).toBe(0o700);
    expect(mode(join(dataDir, '.git', 'objects', 'ab'))).toBe(0o700);
    expect(mode(join(dataDir, '.git', 'objects', 'ab', 'cdef'))).toBe(0o400);
    expect(mode(join(dataDir, '.git', 'hooks-sample'))).toBe(0o700);
    expect(mode(join(dataDir, 'logs', 'agentd.log'))).toBe(0o600);
    expect(mode(join(dataDir, 'obs', 'session-index', '2024-01-01.jsonl'))).toBe(0o600);
    // data dir, 3 db files, .git, objects, ab, cdef, hooks-sample, logs, agentd.log, obs, session-index, the day file
    expect(result.repaired).toBe(14);
    expect(repairPrivateModes({ dataDir }).repaired).toBe(0);
  });

  it('never follows a symlink out of the data directory', () => {
    const outside = dirs.make();
    const secretFile = file(join(outside, 'elsewhere.txt'), 0o644);
    const outsideDir = dir(join(outside, 'dir'), 0o755);
    const inner = file(join(outsideDir, 'inner.txt'), 0o644);
    const dataDir = dir(dirs.make(), 0o700);
    dir(join(dataDir, 'logs'), 0o700);
    symlinkSync(secretFile, join(dataDir, 'logs', 'link.log'));
    symlinkSync(outsideDir, join(dataDir, 'obs'));
    symlinkSync(secretFile, join(dataDir, 'agentd.db'));

    const result = repairPrivateModes({ dataDir });
    expect(result).toEqual({ repaired: 0, failures: [] });
    expect(mode(secretFile)).toBe(0o644);
    expect(mode(outsideDir)).toBe(0o755);
    expect(mode(inner)).toBe(0o644);
  });

  it('leaves names outside the entries alone and skips entries that do not exist', () => {
    const dataDir = dir(dirs.make(), 0o700);
    const other = file(join(dataDir, 'notes.txt'), 0o644);
    const db = file(join(dataDir, 'custom.db'), 0o644);
    expect(repairPrivateModes({ dataDir, entries: ['custom.db', 'absent'] }).repaired).toBe(1);
    expect(mode(db)).toBe(0o600);
    expect(mode(other)).toBe(0o644);
  });

  it('answers nothing repaired for a data directory that does not exist', () => {
    expect(repairPrivateModes({ dataDir: join(dirs.make(), 'missing') })).toEqual({
      repaired: 0,
      failures: [],
    });
  });

  it('lists the database, its WAL files, the config history, logs and evidence', () => {
    for (const name of [
      'agentd.db-wal',
      'agentd.db-shm',
      '.git',
      'logs',
      'obs',
      'graph-runs',
      'workspaces',
    ]) {
      expect(PRIVATE_DATA_DIR_ENTRIES).toContain(name);
    }
  });
});

describe('usePrivateUmask', () => {
  it('makes files and directories created afterwards private to the owner', () => {
    const previous = process.umask(0o022);
    try {
      expect(usePrivateUmask()).toBe(true);
      const base = dirs.make();
      writeFileSync(join(base, 'new.txt'), 'x');
      mkdirSync(join(base, 'new-dir'));
      expect(mode(join(base, 'new.txt'))).toBe(0o600);
      expect(mode(join(base, 'new-dir'))).toBe(0o700);
    } finally {
      process.umask(previous);
    }
  });
});
