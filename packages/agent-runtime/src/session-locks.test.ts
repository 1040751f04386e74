import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type Database,
  isStorageError,
  type KeyedLease,
  type KeyedLock,
  StorageError,
} from '@agentd/storage';
import { afterEach, describe, expect, it } from 'vitest';
import { startRuntime } from '../test/helpers.js';
import { createRuntimeContext } from './runtime-context.js';
import { resolveRuntimeOptions } from './runtime-options.js';
import type { SessionRecord } from './session-store.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A lock as cluster mode's would be, scripted: each run gets the next `continuous` flag. */
function scriptedLock(continuous: boolean[], guard: KeyedLock['guard'] = async () => undefined) {
  const runs: string[] = [];
  const lock: KeyedLock = {
    run: (key, task) => {
      runs.push(key);
      const lease: KeyedLease = {
        key,
        fence: runs.length,
        continuous: continuous.shift() ?? true,
        lost: new AbortController().signal,
      };
      return Promise.resolve(task(lease));
    },
    guard,
  };
  return { lock, runs };
}

describe('sessionLocks', () => {
  it('drops what is cached of a session when another instance held it in between', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentd-locks-'));
    dirs.push(dir);
    const { lock, runs } = scriptedLock([true, false]);
    const ctx = createRuntimeContext(
      resolveRuntimeOptions({ db: {} as Database, dataDir: dir, sessionLocks: lock }),
    );
    const cached = { session: { sessionKey: 's' } as SessionRecord, messages: [], fromSeq: 1 };
    ctx.cache.set('s', cached);
    expect(await ctx.locks.run('s', () => ctx.cache.get('s'))).toBe(cached);
    expect(await ctx.locks.run('s', () => ctx.cache.get('s'))).toBeUndefined();
    expect(runs).toEqual(['s', 's']);
  });

  it('runs each turn under the session key, and writes nothing once the lease is lost', async () => {
    let leaseHeld = true;
    const { lock, runs } = scriptedLock([], async () => {
      if (!leaseHeld)
        throw new StorageError('LEASE_LOST', 'the lease on session:s was lost; the write is refused');
    });
    const t = await startRuntime({ sessionLocks: lock });
    await t.runtime.runTurn({ message: 'first', sessionKey: 's' });
    expect(runs).toEqual(['s']);
    leaseHeld = false;
    const failed = await t.runtime.runTurn({ message: 'second', sessionKey: 's' }).then(
      (result) => result,
      (error: unknown) => error,
    );
    const { messages } = await t.runtime.sessions.history('s');
    expect(messages.map((message) => message.content)).toEqual(['first', expect.any(String)]);
    expect(isStorageError(failed, 'LEASE_LOST')).toBe(true);
  });
});
