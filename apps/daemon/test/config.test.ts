import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHttpClient, RpcCallError } from '@agentd/client';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunningDaemon } from '../src/index.js';
import { ADMIN_TOKEN, daemonPool } from './helpers.js';

const pool = daemonPool('agentd-config-');
/** The test's daemon, which the helpers below call. */
let daemon: RunningDaemon | undefined;
afterEach(async () => {
  await pool.cleanup();
  daemon = undefined;
});

async function admin() {
  daemon = await pool.start(pool.tempDir(), {
    config: {
      gateway: {
        wsHeartbeatMs: 0,
        tokens: [
          { id: 'admin', clientId: 'admin', scopes: ['*'], token: ADMIN_TOKEN },
          {
            id: 'plain',
            clientId: 'plain',
            scopes: ['rpc'],
            token: 'plain-configured-token-abcdef0123456789',
          },
        ],
      },
    },
  });
  return createHttpClient({ url: daemon.url, token: ADMIN_TOKEN });
}

describe('config methods', () => {
  it('reads the config with every credential redacted', async () => {
    const client = await admin();
    const all = (await client.call('config.read', {})) as {
      config: Record<string, unknown>;
      sections: string[];
    };
    expect(all.sections).toEqual(expect.arrayContaining(['gateway', 'daemon', 'storage', 'observability']));
    const text = JSON.stringify(all);
    expect(text).not.toContain('plain-configured-token-abcdef0123456789');
    expect(text).toContain('[REDACTED]');
    const gateway = (await client.call('config.read', { section: 'gateway' })) as { port: number };
    expect(gateway.port).toBe(7420);
    const unknown = await client.call('config.read', { section: 'nope' }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(RpcCallError);
    expect((unknown as RpcCallError).code).toBe(-32602);
  });

  it('patches, commits, reports restart needs and applies hot sections at once', async () => {
    const client = await admin();
    const hot = await client.call('config.patch', { daemon: { logLevels: { gateway: 'debug' } } });
    expect(hot).toMatchObject({ ok: true, changedSections: ['daemon'], restartRequired: [] });
    expect(daemon?.logger.levels().gateway).toBe('debug');

    const cold = await client.call('config.patch', { gateway: { port: 7777 } });
    expect(cold.restartRequired).toContain('gateway.port');

    const history = await client.call('config.history', { limit: 10 });
    expect(history.entries.length).toBeGreaterThanOrEqual(3);
    expect(history.entries[0]?.message).toContain('gateway');
    expect(history.entries[1]?.message).toContain('daemon');

    const diff = await client.call('config.diff', {});
    expect(diff.diff).toContain('7777');
  });

  it('rejects an invalid patch with -32602 and the issues, writing nothing', async () => {
    const client = await admin();
    const before = readFileSync(join(daemon!.dataDir, 'config.yaml'), 'utf8');
    const historyBefore = await client.call('config.history', {});
    const error = await client.call('config.patch', { gateway: { port: 'seven' } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RpcCallError);
    expect((error as RpcCallError).code).toBe(-32602);
    expect(JSON.stringify((error as RpcCallError).data)).toContain('port');
    expect(readFileSync(join(daemon!.dataDir, 'config.yaml'), 'utf8')).toBe(before);
    expect(await client.call('config.history', {})).toEqual(historyBefore);
  });

  it('sets one key, gets raw sections, serves the schema and rolls back', async () => {
    const client = await admin();
    const first = await client.call('config.history', {});
    const set = await client.call('config.set', { section: 'gateway', key: 'maxBatchSize', value: 10 });
    expect(set).toMatchObject({ ok: true, previous: 50 });
    const raw = (await client.call('config.get', { section: 'gateway' })) as { maxBatchSize: number };
    expect(raw.maxBatchSize).toBe(10);

    const schema = await client.call('config.schema', { section: 'gateway' });
    expect(schema.section).toBe('gateway');
    expect(JSON.stringify(schema.schema)).toContain('maxBatchSize');

    const sha = first.entries[0]?.sha as string;
    const rolled = await client.call('config.rollback', { sha });
    expect(rolled).toMatchObject({ ok: true, restoredFrom: sha });
    const back = (await client.call('config.get', { section: 'gateway' })) as { maxBatchSize: number };
    expect(back.maxBatchSize).toBe(50);

    const gc = await client.call('config.gc', {});
    expect(gc).toMatchObject({ ok: true });
  });
});

describe('daemon.setLogLevel', () => {
  it('changes a module level at once and the change shows in the log file', async () => {
    const client = await admin();
    await client.call('daemon.setLogLevel', { module: 'gateway', level: 'debug' });
    expect(daemon?.logger.levels().gateway).toBe('debug');
    daemon?.logger.module('gateway').debug({ step: 'probe' }, 'debug line after setLogLevel');
    await daemon?.logger.flush();
    const lines = readFileSync(join(daemon!.dataDir, 'logs', 'agentd.log'), 'utf8')
      .trim()
      .split('\n');
    const probe = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'debug line after setLogLevel');
    expect(probe).toMatchObject({ module: 'gateway', level: 20 });

    const bad = await client
      .call('daemon.setLogLevel', { module: 'gateway', level: 'loud' })
      .catch((e: unknown) => e);
    expect((bad as RpcCallError).code).toBe(-32602);
  });
});
