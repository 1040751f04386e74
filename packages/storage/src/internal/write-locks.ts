import { Semaphore } from './semaphore.js';

interface Entry {
  lock: Semaphore;
  users: number;
}

// Keyed by the real path of the database file. Two handles on one file in one
// process must share a lock: otherwise the second handle's BEGIN IMMEDIATE
// waits inside the native busy handler, blocking the event loop that the first
// handle needs to finish its transaction, and both stall for busy_timeout.
const locks = new Map<string, Entry>();

/** A write lock shared by every handle of this process on the same file. */
export function acquireFileWriteLock(realPath: string): { lock: Semaphore; release: () => void } {
  let entry = locks.get(realPath);
  if (entry === undefined) {
    entry = { lock: new Semaphore(1), users: 0 };
    locks.set(realPath, entry);
  }
  entry.users += 1;
  const held = entry;
  let released = false;
  return {
    lock: held.lock,
    release: () => {
      if (released) return;
      released = true;
      held.users -= 1;
      if (held.users === 0 && locks.get(realPath) === held) locks.delete(realPath);
    },
  };
}
