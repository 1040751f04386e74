import { KeyedMutex } from '@agentd/async-control';
import { StorageError } from '../errors.js';
import type { Queryable } from '../types.js';
import { nowMs } from './sql.js';
import type { Coordinator } from './types.js';

/** What a task of {@link KeyedLock.run} holds while it runs. */
export interface KeyedLease {
  readonly key: string;
  /** Grows each time the lease is taken; 0 in single mode. */
  readonly fence: number;
  /**
   * True when no other instance held the key since this one last released it, so what this
   * instance cached about the key is still current. Always true in single mode.
   */
  readonly continuous: boolean;
  /** Aborted when a renewal finds the lease gone (this instance stalled past it). */
  readonly lost: AbortSignal;
}

/** Options of {@link keyedLock}. */
export interface KeyedLockOptions {
  /** How often a held lease is renewed; keep it under a third of the coordinator's lease. @default 3000 */
  renewEveryMs?: number | undefined;
  /** How often a waiter tries again without a release notice (the backstop). @default 500 */
  retryMs?: number | undefined;
}

/**
 * One holder per key across the cluster: on libsql, an in-process mutex (today's behaviour);
 * on PostgreSQL, the same mutex in front of a singleton lease `<namespace>:<key>` taken before
 * the task, renewed while it runs and released after with a notice to waiters on any instance.
 */
export interface KeyedLock {
  /** Runs `task` once this instance holds `key` (waiting for the holder, wherever it runs). */
  run<T>(key: string, task: (lease: KeyedLease) => Promise<T> | T): Promise<T>;
  /**
   * Call inside a write transaction of a task of `key`: throws `LEASE_LOST` unless this instance
   * still holds the lease at its task's fence, and keeps the lease row locked until the
   * transaction ends, so no instance takes it over halfway through the write. A no-op in single
   * mode and outside a task of `key`.
   */
  guard(tx: Queryable, key: string): Promise<void>;
}

const NEVER = new AbortController().signal;
/** Keys whose last fence this instance remembers (for `continuous`); older ones count as changed. */
const REMEMBERED_KEYS = 10_000;

/** The in-process lock of one daemon on libsql: a mutex per key, nothing written. */
export function localKeyedLock(): KeyedLock {
  const local = new KeyedMutex();
  return {
    run: (key, task) => local.run(key, () => task({ key, fence: 0, continuous: true, lost: NEVER })),
    guard: async () => undefined,
  };
}

/** The lock of `namespace` on `coordinator`: {@link localKeyedLock} in single mode. */
export function keyedLock(
  coordinator: Coordinator,
  namespace: string,
  options: KeyedLockOptions = {},
): KeyedLock {
  if (coordinator.mode === 'single') return localKeyedLock();
  const local = new KeyedMutex();
  const renewEveryMs = options.renewEveryMs ?? 3000;
  const retryMs = options.retryMs ?? 500;
  const topic = `lease:${namespace}`;
  const held = new Map<string, number>();
  const released = new Map<string, number>();
  const waiters = new Map<string, Set<() => void>>();
  coordinator.bus.subscribe(topic, (message) => {
    const key = (message.payload as { key?: unknown } | null)?.key;
    if (typeof key !== 'string') return;
    for (const wake of waiters.get(key) ?? []) wake();
  });
  const nameOf = (key: string) => `${namespace}:${key}`;

  /** Resolves on a release notice for `key` or after `retryMs`, whichever comes first. */
  const nextTry = (key: string) =>
    new Promise<void>((resolve) => {
      const set = waiters.get(key) ?? new Set();
      waiters.set(key, set);
      const wake = () => {
        clearTimeout(timer);
        set.delete(wake);
        if (set.size === 0) waiters.delete(key);
        resolve();
      };
      const timer = setTimeout(wake, retryMs);
      set.add(wake);
    });

  const remember = (key: string, fence: number) => {
    released.delete(key);
    released.set(key, fence);
    if (released.size > REMEMBERED_KEYS) released.delete(released.keys().next().value as string);
  };

  return {
    run: (key, task) =>
      local.run(key, async () => {
        const singleton = coordinator.singleton(nameOf(key));
        let fence = await singleton.acquire();
        while (fence === undefined) {
          await nextTry(key);
          fence = await singleton.acquire();
        }
        const taken = fence;
        const continuous = released.get(key) === taken - 1;
        held.set(key, taken);
        const lost = new AbortController();
        const renew = setInterval(() => {
          void singleton.acquire().then(
            (now) => {
              if (now === taken) return;
              clearInterval(renew);
              lost.abort(new StorageError('LEASE_LOST', `the lease on ${nameOf(key)} was lost`));
            },
            () => undefined, // a failed renewal is retried at the next tick; the lease outlives two
          );
        }, renewEveryMs);
        try {
          return await task({ key, fence: taken, continuous, lost: lost.signal });
        } finally {
          clearInterval(renew);
          held.delete(key);
          remember(key, taken);
          await singleton.release().catch(() => undefined);
          await coordinator.bus.publish(topic, { key }).catch(() => undefined);
        }
      }),
    async guard(tx, key) {
      const fence = held.get(key);
      if (fence === undefined) return;
      const row = await tx.get<{ fence: number | string }>(
        `SELECT fence FROM cluster_singletons WHERE name = ? AND owner = ? AND lease_until >= ${nowMs('pg')} FOR SHARE`,
        [nameOf(key), coordinator.instanceId],
      );
      if (row === undefined || Number(row.fence) !== fence) {
        throw new StorageError('LEASE_LOST', `the lease on ${nameOf(key)} was lost; the write is refused`);
      }
    },
  };
}
