import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHttpClient } from '@agentd/client';
import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, daemonPool, postRpc, rpcFailure } from './helpers.js';

const pool = daemonPool('agentd-hardening-');
afterEach(() => pool.cleanup());

const ping = '{"jsonrpc":"2.0","method":"system.ping","id":1}';
const OPS_SECRET = 'ops-secret-from-the-environment-0123456789';

describe('token secret references', () => {
  it('authenticates the referenced secret, never the literal reference, and keeps the reference on writes', async () => {
    const daemon = await pool.start(pool.tempDir(), {
      env: { OPS_TOKEN: OPS_SECRET },
      config: {
        gateway: {
          wsHeartbeatMs: 0,
          tokens: [
            { id: 'admin', clientId: 'admin', scopes: ['*'], token: ADMIN_TOKEN },
            { id: 'ops', clientId: 'ops', scopes: ['*'], token: '${secret:OPS_TOKEN}' },
          ],
        },
      },
    });
    expect((await postRpc(daemon.url, ping, OPS_SECRET)).status).toBe(200);
    expect((await postRpc(daemon.url, ping, '${secret:OPS_TOKEN}')).status).toBe(401);

    const admin = createHttpClient({ url: daemon.url, token: ADMIN_TOKEN });
    await admin.call('tokens.create', { scopes: ['rpc'], id: 'app' });
    const yaml = readFileSync(join(daemon.dataDir, 'config.yaml'), 'utf8');
    expect(yaml).toContain('${secret:OPS_TOKEN}');
    expect(yaml).not.toContain(OPS_SECRET);
  });
});

describe('config writes over RPC', () => {
  it('refuses plaintext tokens in gateway.tokens, naming the field', async () => {
    const daemon = await pool.start(pool.tempDir());
    const admin = createHttpClient({ url: daemon.url, token: ADMIN_TOKEN });
    const error = await rpcFailure(
      admin.call('config.patch', {
        gateway: {
          tokens: [{ id: 'x', clientId: 'x', scopes: ['*'], token: 'plaintext-token-0123456789abcdef0123' }],
        },
      }),
    );
    expect(error.code).toBe(-32602);
    expect(error.message).toContain('gateway.tokens.0.token');
    expect(readFileSync(join(daemon.dataDir, 'config.yaml'), 'utf8')).not.toContain('plaintext-token');
  });

  it('applies gateway limits without a restart (only host and port need one) and redacts config.diff', async () => {
    const daemon = await pool.start(pool.tempDir());
    const admin = createHttpClient({ url: daemon.url, token: ADMIN_TOKEN });
    const change = await admin.call('config.patch', { gateway: { maxBatchSize: 2, wsHeartbeatMs: 1000 } });
    expect(change).toMatchObject({ changedSections: ['gateway'], restartRequired: [], applied: true });
    const moved = await admin.call('config.patch', { gateway: { port: 1 } });
    expect(moved.restartRequired).toEqual(['gateway.port']);
    await admin.call('tokens.create', { scopes: ['rpc'], id: 'app' });
    const diff = await admin.call('config.diff', {});
    expect(diff.diff).toContain('tokenHash: "[REDACTED]"');
    expect(diff.diff).not.toMatch(/sha256:[0-9a-f]{8}/);
  });
});

describe('tokens.revoke', () => {
  it('refuses to revoke the last admin token unless forced', async () => {
    const daemon = await pool.start(pool.tempDir());
    const admin = createHttpClient({ url: daemon.url, token: ADMIN_TOKEN });
    const error = await rpcFailure(admin.call('tokens.revoke', { id: 'admin' }));
    expect(error.code).toBe(-32602);
    expect(error.message).toContain('last token with admin scope');
    expect((await postRpc(daemon.url, ping)).status).toBe(200);
    expect(await admin.call('tokens.revoke', { id: 'admin', force: true })).toEqual({
      revoked: true,
      id: 'admin',
    });
    expect((await postRpc(daemon.url, ping)).status).toBe(401);
  });
});

describe('gateway.restart', () => {
  it('keeps serving on the old gateway when config.yaml on disk is invalid', async () => {
    const daemon = await pool.start(pool.tempDir());
    const admin = createHttpClient({ url: daemon.url, token: ADMIN_TOKEN });
    writeFileSync(join(daemon.dataDir, 'config.yaml'), 'gateway:\n  port: "not a port"\n');
    expect(await admin.call('gateway.restart')).toEqual({ ok: true, restarting: true });
    let logged = false;
    for (let attempt = 0; attempt < 50 && !logged; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      logged = readFileSync(join(daemon.dataDir, 'logs', 'agentd.log'), 'utf8').includes(
        'gateway restart failed',
      );
    }
    expect(logged).toBe(true);
    expect(await admin.call('system.ping')).toMatchObject({ pong: true });
  });
});

describe('security audit', () => {
  it('records denied authentications and scope checks for obs.audit.query, without the secret', async () => {
    const daemon = await pool.start(pool.tempDir());
    const admin = createHttpClient({ url: daemon.url, token: ADMIN_TOKEN });
    const planted = 'planted-wrong-secret-0123456789abcdef';
    expect((await postRpc(daemon.url, ping, planted)).status).toBe(401);
    expect((await postRpc(daemon.url, ping, null)).status).toBe(401);
    const created = await admin.call('tokens.create', { scopes: ['rpc'], id: 'app' });
    const app = createHttpClient({ url: daemon.url, token: created.token });
    await rpcFailure(app.call('config.read', {}));

    let rows: Array<Record<string, unknown>> = [];
    for (let attempt = 0; attempt < 50 && rows.length < 3; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      rows = ((await admin.call('obs.audit.query', { classification: 'denied' })) as { rows: typeof rows })
        .rows;
    }
    expect(rows.filter((row) => row.kind === 'auth')).toHaveLength(2);
    expect(rows.filter((row) => row.kind === 'scope')).toEqual([
      expect.objectContaining({ outcome: 'failure', severity: 'medium' }),
    ]);
    const text = JSON.stringify(rows);
    expect(text).not.toContain(planted);
    expect(text).not.toContain(created.token);
  });
});
