import { existsSync, mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startDaemon } from '../src/index.js';
import { ADMIN_TOKEN, startTestDaemon, type TestDaemon } from './helpers.js';

let td: TestDaemon | undefined;
const dirs: string[] = [];

afterEach(async () => {
  await td?.stop();
  td = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

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
      td = await startTestDaemon();
      const dataDir = mkdtempSync(join(tmpdir(), 'agentd-busy-port-'));
      dirs.push(dataDir);
      const failed = await startDaemon({
        dataDir,
        host: '127.0.0.1',
        port: td.daemon.port,
        env: { AGENTD_ADMIN_TOKEN: ADMIN_TOKEN },
        print: () => undefined,
      }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect((failed as NodeJS.ErrnoException | undefined)?.code).toBe('EADDRINUSE');
      // The database's own handles are left out: libsql keeps a connection that prepared a
      // statement open until garbage collection (tursodatabase/libsql-js#228), after close() too.
      const open = openFilesUnder(dataDir).filter((name) => !name.startsWith('agentd.db'));
      expect(open).toEqual([]);
      // The failed start left nothing that keeps the data dir from starting again.
      await td.stop();
      const again = await startDaemon({
        dataDir,
        host: '127.0.0.1',
        port: 0,
        env: { AGENTD_ADMIN_TOKEN: ADMIN_TOKEN },
        print: () => undefined,
      });
      td = { daemon: again, dataDir, stop: () => again.stop() };
    },
  );
});
