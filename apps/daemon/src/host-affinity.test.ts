import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RpcError } from '@agentd/rpc-core';
import {
  type Coordinator,
  type Database,
  openCoordination,
  openDatabase,
  openHostAffinity,
} from '@agentd/storage';
import { freshPgDatabaseUrl, pgSuitesEnabled } from '@agentd/storage/testing';
import { createTerminalService, isTerminalError, type TerminalService } from '@agentd/terminal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostBoundTerminal } from './host-affinity.js';

describe.skipIf(!pgSuitesEnabled())('terminal drives of two instances on one PostgreSQL', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentd-drive-affinity-'));
  const closers: Array<() => Promise<unknown>> = [];
  let url: string;

  /** One instance: its own pool, coordinator, host affinity and real terminal service. */
  async function instance(id: string) {
    const db: Database = await openDatabase({ url, poolMax: 2 });
    const coordinator: Coordinator = await openCoordination(db, {
      instanceId: id,
      advertiseUrl: `http://${id}.test:7777`,
    });
    await coordinator.start();
    const affinity = await openHostAffinity({ db, coordinator });
    const raw = createTerminalService({ cwd: async () => dir, killGraceMs: 100 });
    closers.unshift(
      () => raw.shutdown(),
      () => affinity.close(),
      () => coordinator.close(),
      () => db.close(),
    );
    return { affinity, terminal: hostBoundTerminal(raw, affinity) };
  }

  async function failure(call: Promise<unknown>): Promise<unknown> {
    return call.then(
      () => expect.fail('the call should have failed'),
      (error: unknown) => error,
    );
  }

  let a: { terminal: TerminalService; affinity: Awaited<ReturnType<typeof openHostAffinity>> };
  let b: typeof a;
  beforeAll(async () => {
    url = await freshPgDatabaseUrl('agentd_drive_affinity');
    a = await instance('a');
    b = await instance('b');
  });
  afterAll(async () => {
    for (const close of closers) await close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers a drive opened on A and named on B with -32010 naming A; another agent is told not found', async () => {
    const { sessionId } = await a.terminal.open('ops', { command: 'cat' });
    const elsewhere = await failure(b.terminal.read('ops', sessionId));
    expect(elsewhere).toBeInstanceOf(RpcError);
    expect((elsewhere as RpcError).toJSON()).toEqual({
      code: -32010,
      message: `Terminal drive ${sessionId} is held by instance a; call http://a.test:7777`,
      data: { code: 'INSTANCE_AFFINITY', instanceId: 'a', advertiseUrl: 'http://a.test:7777' },
    });
    expect(((await failure(b.terminal.send('ops', sessionId, { text: 'x' }))) as RpcError).code).toBe(-32010);
    // Drives are each agent's own: another agent's call learns nothing of this one.
    const stranger = await failure(b.terminal.read('intruder', sessionId));
    expect(isTerminalError(stranger) && stranger.code).toBe('SESSION_NOT_FOUND');
    // Used on A, it answers; closed, it is gone from every instance.
    expect((await a.terminal.read('ops', sessionId)).sessionId).toBe(sessionId);
    await a.terminal.close('ops', sessionId);
    const gone = await failure(b.terminal.read('ops', sessionId));
    expect(isTerminalError(gone) && gone.code).toBe('SESSION_NOT_FOUND');
  });

  it("answers not found once the drive's instance is gone", async () => {
    const { sessionId } = await a.terminal.open('ops', { command: 'cat' });
    await a.affinity.close();
    const gone = await failure(b.terminal.wait('ops', sessionId, { timeoutMs: 50 }));
    expect(isTerminalError(gone) && gone.code).toBe('SESSION_NOT_FOUND');
  });
});
