import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHttpClient, createWsClient, RpcCallError } from '@agentd/client';
import { defineMethod } from '@agentd/rpc-core';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ADMIN_TOKEN, daemonPool, openRaw, postRpc } from './helpers.js';
import { METHOD_CATALOGUE } from './method-catalogue.js';

/**
 * Catalogue methods not served yet. Each issue that adds methods removes them here: the
 * discovery test fails while a served method is still listed, and while a catalogue method is
 * neither served nor listed.
 */
const EXPECTED_MISSING: ReadonlySet<string> = new Set([]);

const pool = daemonPool('agentd-gateway-');
afterEach(() => pool.cleanup());

const ping = (id: number | string) => JSON.stringify({ jsonrpc: '2.0', method: 'system.ping', id });

describe('gateway errors', () => {
  it('answers every documented error code with its documented shape', async () => {
    const secretMessage = 'database password is hunter2';
    const daemon = await pool.start(pool.tempDir(), {
      config: { gateway: { maxBatchSize: 3, wsMaxMessageBytes: 2048, wsHeartbeatMs: 0 } },
      methods: [
        defineMethod({
          name: 'test.boom',
          scope: 'rpc',
          params: z.object({}),
          handler: () => {
            throw new Error(secretMessage);
          },
        }),
      ],
    });
    const s = await openRaw(daemon.wsUrl);

    s.send('{not json');
    expect(await s.next()).toMatchObject({ error: { code: -32700 }, id: null });

    s.send(Buffer.from(ping(1)));
    expect(await s.next()).toMatchObject({ error: { code: -32700 }, id: null });

    // Oversized text that is not even JSON: the size check comes before parsing.
    s.send(`{${'x'.repeat(5000)}`);
    const oversized = (await s.next()) as { error: { code: number; message: string }; id: null };
    expect(oversized.error.code).toBe(-32600);
    expect(oversized.id).toBeNull();
    expect(oversized.error.message).toContain('5001');
    expect(oversized.error.message).toContain('2048');

    s.send(`[${[1, 2, 3, 4].map((id) => ping(id)).join(',')}]`);
    expect(await s.next()).toMatchObject({ error: { code: -32600 }, id: null });

    s.send('{"jsonrpc":"2.0","method":"nope.nothing","id":7}');
    expect(await s.next()).toMatchObject({ error: { code: -32601 }, id: 7 });

    s.send('{"jsonrpc":"2.0","method":"config.history","params":{"limit":"ten"},"id":8}');
    const invalid = (await s.next()) as {
      error: { code: number; message: string; data: { issues: unknown[] } };
    };
    expect(invalid.error.code).toBe(-32602);
    expect(invalid.error.message).toContain('limit');
    expect(invalid.error.data.issues.length).toBeGreaterThan(0);

    s.send('{"jsonrpc":"2.0","method":"test.boom","id":9}');
    const internal = (await s.next()) as { error: { code: number; message: string }; id: number };
    expect(internal.error.code).toBe(-32603);
    expect(internal.id).toBe(9);
    expect(JSON.stringify(internal)).not.toContain('hunter2');
    // The log keeps what the client was not told.
    const log = readFileSync(join(daemon.dataDir, 'logs', 'agentd.log'), 'utf8');
    expect(log).toContain('hunter2');
    s.close();
  });

  it('rate-limits each connection with a sliding window and discards the excess', async () => {
    const daemon = await pool.start(pool.tempDir(), {
      config: { gateway: { wsMessageRateLimit: { maxMessages: 5, windowMs: 60_000 }, wsHeartbeatMs: 0 } },
    });
    const s = await openRaw(daemon.wsUrl);
    for (let i = 1; i <= 7; i++) s.send(ping(i));
    const answers = [];
    for (let i = 0; i < 7; i++)
      answers.push((await s.next()) as { id: unknown; error?: { code: number; message: string } });
    expect(answers.filter((a) => a.error === undefined).map((a) => a.id)).toEqual([1, 2, 3, 4, 5]);
    const limited = answers.filter((a) => a.error);
    expect(limited).toHaveLength(2);
    for (const a of limited) {
      expect(a).toMatchObject({ error: { code: -32000, message: 'Message rate limit exceeded' }, id: null });
    }
    // Another connection has its own window.
    const other = await openRaw(daemon.wsUrl);
    other.send(ping('x'));
    expect(await other.next()).toMatchObject({ result: { pong: true }, id: 'x' });
    s.close();
    other.close();
  });
});

describe('authentication and scopes', () => {
  it('accepts the upgrade then closes 4001 without a valid token', async () => {
    const daemon = await pool.start(pool.tempDir());
    const none = await openRaw(daemon.wsUrl, null);
    expect((await none.closed)[0]).toBe(4001);
    const wrong = await openRaw(daemon.wsUrl, 'not-the-token');
    expect((await wrong.closed)[0]).toBe(4001);
  });

  it('accepts the token in the query parameter on WebSocket', async () => {
    const daemon = await pool.start(pool.tempDir());
    const s = await openRaw(`${daemon.wsUrl}?token=${ADMIN_TOKEN}`, null);
    s.send(ping(1));
    expect(await s.next()).toMatchObject({ result: { pong: true }, id: 1 });
    s.close();
  });

  it('answers HTTP 401 with a JSON-RPC error body without a valid token', async () => {
    const daemon = await pool.start(pool.tempDir());
    const answer = await postRpc(daemon.url, ping(1), 'wrong');
    expect(answer.status).toBe(401);
    expect(answer.body).toMatchObject({
      jsonrpc: '2.0',
      error: { code: -32001, message: 'Unauthorized' },
      id: null,
    });
  });

  it('refuses an rpc-scoped token on admin methods with the documented message', async () => {
    const daemon = await pool.start(pool.tempDir());
    const admin = createHttpClient({ url: daemon.url, token: ADMIN_TOKEN });
    const created = await admin.call('tokens.create', { scopes: ['rpc'], id: 'app' });
    const rpc = createHttpClient({ url: daemon.url, token: created.token });
    expect(await rpc.call('system.ping')).toMatchObject({ pong: true });
    const error = await rpc.call('config.read', {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RpcCallError);
    expect((error as RpcCallError).code).toBe(-32603);
    expect((error as RpcCallError).message).toBe("Insufficient scope: requires 'admin'");
  });
});

describe('tokens', () => {
  it('creates, lists without secrets and revokes at once, closing the token sockets', async () => {
    const daemon = await pool.start(pool.tempDir());
    const admin = createHttpClient({ url: daemon.url, token: ADMIN_TOKEN });
    const created = await admin.call('tokens.create', { scopes: ['rpc'], clientId: 'mobile' });
    expect(created.token.length).toBeGreaterThanOrEqual(32);
    const list = await admin.call('tokens.list');
    expect(JSON.stringify(list)).not.toContain(created.token);
    expect(list.tokens.find((t) => t.id === created.id)).toMatchObject({
      clientId: 'mobile',
      scopes: ['rpc'],
    });

    // Only the hash reaches config.yaml.
    const yaml = readFileSync(join(daemon.dataDir, 'config.yaml'), 'utf8');
    expect(yaml).not.toContain(created.token);
    expect(yaml).toContain('sha256:');

    const s = await openRaw(daemon.wsUrl, created.token);
    s.send(ping(1));
    expect(await s.next()).toMatchObject({ result: { pong: true } });
    expect(await admin.call('tokens.revoke', { id: created.id })).toEqual({ revoked: true, id: created.id });
    expect((await s.closed)[0]).toBe(4001);
    expect((await postRpc(daemon.url, ping(2), created.token)).status).toBe(401);

    const missing = await admin.call('tokens.revoke', { id: 'no-such-token' }).catch((e: unknown) => e);
    expect(missing).toMatchObject({ code: -32004, message: 'Token not found: no-such-token' });
  });
});

describe('notifications and close codes', () => {
  it('sends heartbeat notifications at gateway.wsHeartbeatMs', async () => {
    const daemon = await pool.start(pool.tempDir(), { config: { gateway: { wsHeartbeatMs: 100 } } });
    const s = await openRaw(daemon.wsUrl);
    const beat = (await s.next(3000)) as { method: string; params: { ts: number }; id?: unknown };
    expect(beat.method).toBe('heartbeat');
    expect(typeof beat.params.ts).toBe('number');
    expect(beat.id).toBeUndefined();
    s.close();
  });

  it('targets notifications at one clientId and broadcasts untargeted ones', async () => {
    const daemon = await pool.start(pool.tempDir(), { config: { gateway: { wsHeartbeatMs: 0 } } });
    const admin = createHttpClient({ url: daemon.url, token: ADMIN_TOKEN });
    const a = await admin.call('tokens.create', { scopes: ['rpc'], clientId: 'alice' });
    const b = await admin.call('tokens.create', { scopes: ['rpc'], clientId: 'bob' });
    const alice = await openRaw(daemon.wsUrl, a.token);
    const bob = await openRaw(daemon.wsUrl, b.token);
    daemon.notify('alice', 'session.completed', { sessionKey: 'default:rpc:alice', result: 'done' });
    expect(await alice.next()).toEqual({
      jsonrpc: '2.0',
      method: 'session.completed',
      params: { sessionKey: 'default:rpc:alice', result: 'done' },
    });
    daemon.notify(undefined, 'subagent.announce', { runId: 'r1' });
    expect(await alice.next()).toMatchObject({ method: 'subagent.announce', params: { runId: 'r1' } });
    // Bob's first message is the broadcast: the targeted one never reached him.
    expect(await bob.next()).toMatchObject({ method: 'subagent.announce' });
    alice.close();
    bob.close();
  });

  it('closes sockets with 1001 Server shutting down on graceful stop', async () => {
    const daemon = await pool.start(pool.tempDir(), { config: { gateway: { wsHeartbeatMs: 0 } } });
    const s = await openRaw(daemon.wsUrl);
    const stopping = daemon.stop();
    expect(await s.closed).toEqual([1001, 'Server shutting down']);
    await stopping;
  });

  it('restarts in process: clients see 1001, reconnect and call again', async () => {
    const daemon = await pool.start(pool.tempDir(), { config: { gateway: { wsHeartbeatMs: 0 } } });
    const client = createWsClient({
      url: daemon.wsUrl,
      token: ADMIN_TOKEN,
      reconnect: { enabled: true, initialDelayMs: 50, maxDelayMs: 200 },
    });
    await client.connect();
    const closes: number[] = [];
    client.on('close', (info) => closes.push(info.code));
    expect(await client.call('gateway.restart')).toEqual({ ok: true, restarting: true });
    await new Promise((resolve) => client.on('open', () => resolve(undefined)));
    expect(closes).toContain(1001);
    expect(await client.call('system.ping')).toMatchObject({ pong: true });
    client.close();
  });
});

describe('gateway.status and rpc.discover', () => {
  it('reports the process facts of the contract', async () => {
    const daemon = await pool.start(pool.tempDir());
    const client = createHttpClient({ url: daemon.url, token: ADMIN_TOKEN });
    const status = await client.call('gateway.status');
    expect(status.pid).toBe(process.pid);
    expect(status.uptime).toBeGreaterThanOrEqual(0);
    expect(status.memoryUsage).toBeGreaterThan(0);
    expect(status.nodeVersion).toBe(process.version);
    expect(status.configPaths).toEqual([join(daemon.dataDir, 'config.yaml')]);
    expect(status.sections).toEqual(
      expect.arrayContaining([
        'gateway',
        'daemon',
        'storage',
        'observability',
        'agents',
        'providers',
        'cron',
        'heartbeat',
        'memory',
        'webhooks',
        'graph',
        'browser',
        'cluster',
      ]),
    );
    // The embedded default is a cluster of one: itself, at the URL it listens on.
    expect(status.cluster.mode).toBe('single');
    expect(status.cluster.instances).toEqual([
      {
        instanceId: status.cluster.instanceId,
        advertiseUrl: daemon.url,
        startedAt: expect.any(Number),
        heartbeatAt: expect.any(Number),
      },
    ]);
  });

  it('names the instance and its advertised URL from the cluster section', async () => {
    const daemon = await pool.start(pool.tempDir(), {
      config: { cluster: { instanceId: 'edge-1', advertiseUrl: 'https://agentd.example.com' } },
    });
    const status = await createHttpClient({ url: daemon.url, token: ADMIN_TOKEN }).call('gateway.status');
    expect(status.cluster).toMatchObject({
      mode: 'single',
      instanceId: 'edge-1',
      instances: [{ instanceId: 'edge-1', advertiseUrl: 'https://agentd.example.com' }],
    });
  });

  it('refuses cluster settings with a libsql server URL, before opening it', async () => {
    const failure = await pool
      .start(pool.tempDir(), {
        config: { cluster: { leaseMs: 5000 }, storage: { url: 'libsql://db.example.invalid' } },
      })
      .then(
        () => undefined,
        (error: unknown) => error as Error,
      );
    expect(failure?.message).toMatch(/cluster section \(leaseMs\) needs a postgres:\/\/ storage URL/);
  });

  it('serves the method catalogue: each method registered with its scope or named as expected missing', async () => {
    const daemon = await pool.start(pool.tempDir());
    const client = createHttpClient({ url: daemon.url, token: ADMIN_TOKEN });
    const doc = await client.call('rpc.discover');
    expect(doc.openrpc).toMatch(/^1\.3/);
    const registered = new Map(doc.methods.map((m) => [m.name, m['x-scope']]));
    const catalogue = Object.keys(METHOD_CATALOGUE);
    expect(catalogue).toHaveLength(170);
    // Every name below is a catalogue method.
    expect([...EXPECTED_MISSING].filter((name) => !(name in METHOD_CATALOGUE))).toEqual([]);
    // Nothing outside the catalogue is served.
    expect([...registered.keys()].filter((name) => !(name in METHOD_CATALOGUE)).sort()).toEqual([]);
    // A method that lands must leave EXPECTED_MISSING in the same change.
    expect(catalogue.filter((name) => registered.has(name) && EXPECTED_MISSING.has(name)).sort()).toEqual([]);
    // A catalogue method is either served or named as still missing.
    expect(catalogue.filter((name) => !registered.has(name) && !EXPECTED_MISSING.has(name)).sort()).toEqual(
      [],
    );
    // Each served method has the scope the catalogue gives it.
    const wrongScope = [...registered].filter(([name, scope]) => METHOD_CATALOGUE[name] !== scope);
    expect(wrongScope).toEqual([]);
    expect(registered.size).toBe(170 - EXPECTED_MISSING.size);
    // The contract keeps these two unregistered.
    for (const name of ['context.inspect', 'context.searchByConversation']) {
      expect(registered.has(name)).toBe(false);
      const error = await client.call(name).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(error).toBeInstanceOf(RpcCallError);
      expect((error as RpcCallError).code).toBe(-32601);
    }
    const setLevel = doc.methods.find((m) => m.name === 'daemon.setLogLevel');
    expect(setLevel?.['x-scope']).toBe('admin');
    expect(JSON.stringify(setLevel?.params)).toContain('module');
    expect(doc.methods.find((m) => m.name === 'system.ping')?.['x-scope']).toBe('rpc');
  });
});
