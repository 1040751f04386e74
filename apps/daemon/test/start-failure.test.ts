import { existsSync, readdirSync, readlinkSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { daemonPool, startDaemonIn } from './helpers.js';

const pool = daemonPool('agentd-busy-port-');
afterEach(() => pool.cleanup());

/** Files under `dir` this process holds open (Linux: /proc/self/fd). */
function openFilesUnder(dir: string): string[] {
  return readdirSync('/proc/self/fd').flatMap((fd) => {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      return target.startsWith(`${dir}/`) ? [target.slice(dir.length + 1)] : [];
    } catch {
      return [];
    }
  });
}

describe('startDaemon', () => {
  it.runIf(existsSync('/proc/self/fd'))(
    'closes its log, config-audit and cache-trace files when it cannot listen, and the data dir starts again',
    async () => {
      const busy = await pool.start(pool.tempDir());
      const dataDir = pool.tempDir();
      const failed = await startDaemonIn(dataDir, { port: busy.port }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect((failed as NodeJS.ErrnoException | undefined)?.code).toBe('EADDRINUSE');
      // The database's own handles are left out: libsql keeps a connection that prepared a
      // statement open until garbage collection (tursodatabase/libsql-js#228), after close() too.
      const open = openFilesUnder(dataDir).filter((name) => !name.startsWith('agentd.db'));
      expect(open).toEqual([]);
      // The failed start left nothing that keeps the data dir from starting again.
      await busy.stop();
      await pool.start(dataDir);
    },
  );
});
