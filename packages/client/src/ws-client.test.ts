import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, expectTypeOf, it } from 'vitest';
import { rejection, TestServer, WireFailure } from '../test/json-rpc-server.js';
import { ClientError, RpcCallError } from './errors.js';
import type { MemorySearchEntry, OpenRpcDocument } from './methods.js';
import { type CloseInfo, createWsClient, type WsClient, type WsClientOptions } from './ws-client.js';

const TOKEN = 'test-token-123';

const handlers = {
  'system.ping': () => ({ pong: true, ts: Date.now() }),
  echo: (params: unknown) => params,
  fail: () => {
    throw new WireFailure(-32602, 'Invalid params: name is required', { issues: [{ path: ['name'] }] });
  },
  never: () => new Promise(() => {}),
  slow: async (params: unknown) => {
    await sleep((params as { ms: number }).ms);
    return 'slow done';
  },
  'notify.me': (params: unknown, context: { socket: { send(data: string): void } | undefined }) => {
    context.socket?.send(JSON.stringify({ jsonrpc: '2.0', method: 'session.completed', params }));
    return { sent: true };
  },
};

const servers: TestServer[] = [];
const clients: WsClient[] = [];

async function startServer(extra: { port?: number; reverseBatches?: boolean } = {}): Promise<TestServer> {
  const server = await TestServer.start({ token: TOKEN, handlers, ...extra });
  servers.push(server);
  return server;
}

function client(server: TestServer, options: Partial<WsClientOptions> = {}): WsClient {
  const created = createWsClient({
    url: server.wsUrl,
    token: TOKEN,
    reconnect: { initialDelayMs: 20, maxDelayMs: 100 },
    ...options,
  });
  clients.push(created);
  return created;
}

function nextEvent<T>(target: WsClient, event: 'open' | 'close' | 'reconnecting' | 'error'): Promise<T> {
  return new Promise((resolve) => {
    const off = target.on(event, ((value: T) => {
      off();
      resolve(value);
    }) as never);
  });
}

afterEach(async () => {
  await Promise.all(clients.splice(0).map((entry) => entry.close()));
  await Promise.all(servers.splice(0).map((entry) => entry.stop(1000, 'test over')));
});

// Calls, batches and notifications sent.
describe('createWsClient', () => {
  it('sends the token as a bearer header and resolves calls with their results', async () => {
    const server = await startServer();
    const ws = client(server);
    await ws.connect();
    expect(ws.state).toBe('open');
    const pong = await ws.call('system.ping');
    expect(pong.pong).toBe(true);
    expect(typeof pong.ts).toBe('number');
    await expect(ws.call('echo', { a: 1, nested: [1, 2] })).resolves.toEqual({ a: 1, nested: [1, 2] });
    expect(server.upgrades[0]!.authorization).toBe(`Bearer ${TOKEN}`);
    expect(server.upgrades[0]!.url).toBe('/ws');
  });

  it('leaves params out of the request when none are given', async () => {
    const server = await startServer();
    const ws = client(server);
    await ws.connect();
    await ws.call('system.ping');
    const last = server.received.at(-1) as Record<string, unknown>;
    expect(last).toMatchObject({ jsonrpc: '2.0', method: 'system.ping' });
    expect('params' in last).toBe(false);
    expect(typeof last.id).toBe('number');
  });

  it('rejects with an RpcCallError carrying the wire code, message and data', async () => {
    const server = await startServer();
    const ws = client(server);
    await ws.connect();
    const error = await rejection(ws.call('fail', {}));
    expect(error).toBeInstanceOf(RpcCallError);
    expect(error).toMatchObject({
      code: -32602,
      message: 'Invalid params: name is required',
      data: { issues: [{ path: ['name'] }] },
    });
    const missing = await rejection(ws.call('context.inspect', {}));
    expect(missing).toMatchObject({ name: 'RpcCallError', code: -32601 });
  });

  it('rejects with TIMEOUT when no answer arrives in time and ignores the late answer', async () => {
    const server = await startServer();
    const ws = client(server);
    await ws.connect();
    const error = await rejection(ws.call('slow', { ms: 300 }, { timeoutMs: 50 }));
    expect(error).toBeInstanceOf(ClientError);
    expect(error).toMatchObject({ code: 'TIMEOUT', data: { timeoutMs: 50 } });
    await sleep(350);
    await expect(ws.call('echo', { after: true })).resolves.toEqual({ after: true });
  });

  it('uses requestTimeoutMs as the default timeout', async () => {
    const server = await startServer();
    const ws = client(server, { requestTimeoutMs: 60 });
    await ws.connect();
    await expect(ws.call('never', {})).rejects.toMatchObject({ code: 'TIMEOUT' });
  });

  it('rejects with ABORTED when the signal fires, or at once when it already fired', async () => {
    const server = await startServer();
    const ws = client(server);
    await ws.connect();
    const controller = new AbortController();
    const pending = ws.call('never', {}, { signal: controller.signal });
    controller.abort(new Error('user gave up'));
    const error = await rejection(pending);
    expect(error).toMatchObject({ code: 'ABORTED' });
    expect((error as ClientError).cause).toMatchObject({ message: 'user gave up' });

    const before = server.received.length;
    await expect(ws.call('echo', {}, { signal: AbortSignal.abort() })).rejects.toMatchObject({
      code: 'ABORTED',
    });
    expect(server.received.length).toBe(before);
  });

  it('returns batch results in request order even when answers arrive reversed', async () => {
    const server = await startServer({ reverseBatches: true });
    const ws = client(server);
    await ws.connect();
    const results = await ws.batch([
      { method: 'echo', params: { n: 1 } },
      { method: 'fail', params: {} },
      { method: 'echo', params: { n: 3 }, notification: true },
      { method: 'system.ping' },
    ] as const);
    expect(results).toHaveLength(4);
    expect(results[0]).toEqual({ n: 1 });
    expect(results[1]).toBeInstanceOf(RpcCallError);
    expect(results[1]).toMatchObject({ code: -32602 });
    expect(results[2]).toBeUndefined();
    expect(results[3]).toMatchObject({ pong: true });
    const frame = server.received.at(-1) as Array<Record<string, unknown>>;
    expect(Array.isArray(frame)).toBe(true);
    expect(frame[2]).not.toHaveProperty('id');
  });

  it('resolves an empty batch without sending anything and a notification-only batch once written', async () => {
    const server = await startServer();
    const ws = client(server);
    await ws.connect();
    const before = server.received.length;
    await expect(ws.batch([])).resolves.toEqual([]);
    expect(server.received.length).toBe(before);
    await expect(ws.batch([{ method: 'echo', params: { x: 1 }, notification: true }])).resolves.toEqual([
      undefined,
    ]);
  });

  it('sends notifications without an id', async () => {
    const server = await startServer();
    const ws = client(server);
    await ws.connect();
    await ws.notify('echo', { fire: 'and forget' });
    await ws.call('system.ping');
    expect(server.received).toContainEqual({
      jsonrpc: '2.0',
      method: 'echo',
      params: { fire: 'and forget' },
    });
  });
});

// Server notifications and unreadable frames.
describe('createWsClient', () => {
  it('emits server notifications generically and per method, and stops after unsubscribe', async () => {
    const server = await startServer();
    const ws = client(server);
    await ws.connect();
    const all: Array<[string, unknown]> = [];
    const beats: Array<{ ts: number }> = [];
    const completed: unknown[] = [];
    ws.on('notification', (method, params) => all.push([method, params]));
    const offHeartbeat = ws.on('heartbeat', (params) => beats.push(params));
    ws.on('session.completed', (params) => completed.push(params));

    server.broadcast('heartbeat', { ts: 42 });
    server.broadcast('something.unknown', { x: 1 });
    await ws.call('notify.me', { sessionKey: 'default:rpc:me', result: 'done' });
    offHeartbeat();
    server.broadcast('heartbeat', { ts: 43 });
    await ws.call('system.ping');

    expect(beats).toEqual([{ ts: 42 }]);
    expect(completed).toEqual([{ sessionKey: 'default:rpc:me', result: 'done' }]);
    expect(all).toEqual([
      ['heartbeat', { ts: 42 }],
      ['something.unknown', { x: 1 }],
      ['session.completed', { sessionKey: 'default:rpc:me', result: 'done' }],
      ['heartbeat', { ts: 43 }],
    ]);
  });

  it('keeps working when a listener throws', async () => {
    const server = await startServer();
    const ws = client(server);
    await ws.connect();
    ws.on('heartbeat', () => {
      throw new Error('listener bug');
    });
    server.broadcast('heartbeat', { ts: 1 });
    await expect(ws.call('echo', { still: 'fine' })).resolves.toEqual({ still: 'fine' });
  });

  it('reports unparseable frames and unattributable error answers as error events', async () => {
    const server = await startServer();
    const ws = client(server);
    await ws.connect();
    const errors: unknown[] = [];
    ws.on('error', (error) => errors.push(error));
    server.sendRaw('this is not json');
    server.sendRaw(
      JSON.stringify({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32000, message: 'Message rate limit exceeded' },
      }),
    );
    await ws.call('system.ping');
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatchObject({ name: 'ClientError', code: 'BAD_RESPONSE' });
    expect(errors[1]).toBeInstanceOf(RpcCallError);
    expect(errors[1]).toMatchObject({ code: -32000, message: 'Message rate limit exceeded' });
  });
});

// Authentication, reconnects and closing.
describe('createWsClient', () => {
  it('rejects connect with UNAUTHORIZED on close 4001 and never reconnects', async () => {
    const server = await startServer();
    const ws = client(server, { token: 'wrong-token' });
    const reconnects: unknown[] = [];
    ws.on('reconnecting', (info) => reconnects.push(info));
    const error = await rejection(ws.connect());
    expect(error).toBeInstanceOf(ClientError);
    expect(error).toMatchObject({ code: 'UNAUTHORIZED', data: { code: 4001 } });
    await sleep(300);
    expect(server.upgrades).toHaveLength(1);
    expect(reconnects).toEqual([]);
    expect(ws.state).toBe('idle');
    await expect(ws.call('system.ping')).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it('stops reconnecting and emits UNAUTHORIZED when the token is refused during a reconnect', async () => {
    const server = await startServer();
    const port = server.port;
    const ws = client(server);
    await ws.connect();
    await server.stop();
    servers.splice(servers.indexOf(server), 1);
    const errorEvent = nextEvent<ClientError>(ws, 'error');
    const replacement = await TestServer.start({ token: 'rotated-token', handlers, port });
    servers.push(replacement);
    const error = await errorEvent;
    expect(error).toMatchObject({ code: 'UNAUTHORIZED' });
    const upgrades = replacement.upgrades.length;
    await sleep(300);
    expect(replacement.upgrades.length).toBe(upgrades);
    expect(ws.state).toBe('idle');
  });

  it('can send the token as a query parameter instead of a header', async () => {
    const server = await startServer();
    const ws = client(server, { tokenLocation: 'query' });
    await ws.connect();
    await expect(ws.call('system.ping')).resolves.toMatchObject({ pong: true });
    expect(server.upgrades[0]!.url).toBe(`/ws?token=${TOKEN}`);
    expect(server.upgrades[0]!.authorization).toBeUndefined();
  });

  it('reconnects after the server shuts down with 1001 and serves later calls on the new server', async () => {
    const server = await startServer();
    const port = server.port;
    const ws = client(server);
    await ws.connect();
    const closed = nextEvent<CloseInfo>(ws, 'close');
    const reconnecting: unknown[] = [];
    ws.on('reconnecting', (info) => reconnecting.push(info));

    await server.stop(1001, 'Server shutting down');
    servers.splice(servers.indexOf(server), 1);
    expect(await closed).toEqual({ code: 1001, reason: 'Server shutting down', willReconnect: true });
    expect(ws.state).toBe('reconnecting');

    // A call made while the server is down waits for the reconnection instead of failing.
    const waiting = ws.call('echo', { queued: true }, { timeoutMs: 10_000 });
    await sleep(150);
    const reopened = nextEvent(ws, 'open');
    const replacement = await startServer({ port });
    await reopened;
    await expect(waiting).resolves.toEqual({ queued: true });
    await expect(ws.call('system.ping')).resolves.toMatchObject({ pong: true });
    expect(reconnecting.length).toBeGreaterThan(0);
    expect(reconnecting[0]).toMatchObject({ attempt: 1 });
    expect(replacement.upgrades.length).toBeGreaterThan(0);
  });

  it('fails in-flight calls with CLOSED when the connection drops', async () => {
    const server = await startServer();
    const ws = client(server);
    await ws.connect();
    const inFlight = rejection(ws.call('never', {}));
    const inFlightBatch = rejection(ws.batch([{ method: 'never' }, { method: 'echo', params: {} }]));
    await sleep(50);
    await server.stop(1001);
    servers.splice(servers.indexOf(server), 1);
    const error = await inFlight;
    expect(error).toBeInstanceOf(ClientError);
    expect(error).toMatchObject({ code: 'CLOSED', data: { code: 1001 } });
    expect((error as Error).message).toMatch(/may or may not have executed/);
    expect(await inFlightBatch).toMatchObject({ code: 'CLOSED' });
  });

  it('fails calls fast with NOT_CONNECTED when reconnect is disabled and the connection is lost', async () => {
    const server = await startServer();
    const ws = client(server, { reconnect: false });
    await ws.connect();
    const closed = nextEvent<CloseInfo>(ws, 'close');
    await server.stop(1001);
    servers.splice(servers.indexOf(server), 1);
    expect(await closed).toMatchObject({ code: 1001, willReconnect: false });
    expect(ws.state).toBe('idle');
    await expect(ws.call('system.ping', {}, { timeoutMs: 10_000 })).rejects.toMatchObject({
      code: 'NOT_CONNECTED',
    });
  });

  it('does not reconnect after the server closes normally with 1000', async () => {
    const server = await startServer();
    const ws = client(server);
    await ws.connect();
    const closed = nextEvent<CloseInfo>(ws, 'close');
    for (const socket of server.sockets) socket.close(1000, 'bye');
    expect(await closed).toMatchObject({ code: 1000, willReconnect: false });
    await sleep(200);
    expect(server.upgrades).toHaveLength(1);
  });

  it('gives up after maxAttempts and fails waiting calls with CONNECT_FAILED', async () => {
    const server = await startServer();
    const ws = client(server, { reconnect: { initialDelayMs: 10, maxDelayMs: 20, maxAttempts: 3 } });
    await ws.connect();
    const attempts: number[] = [];
    ws.on('reconnecting', (info) => attempts.push(info.attempt));
    const gaveUp = nextEvent<ClientError>(ws, 'error');
    await server.stop(1001);
    servers.splice(servers.indexOf(server), 1);
    const waiting = rejection(ws.call('system.ping', {}, { timeoutMs: 10_000 }));
    const error = await gaveUp;
    expect(error).toMatchObject({ code: 'CONNECT_FAILED', data: { attempts: 3 } });
    expect(attempts).toEqual([1, 2, 3]);
    expect(await waiting).toMatchObject({ code: 'CONNECT_FAILED' });
    expect(ws.state).toBe('idle');
  });

  it('closes with 1000, does not reconnect, and fails later calls with CLOSED', async () => {
    const server = await startServer();
    const ws = client(server);
    await ws.connect();
    const serverSide = [...server.sockets][0]!;
    const serverClose = new Promise<number>((resolve) => serverSide.on('close', (code) => resolve(code)));
    const pending = rejection(ws.call('never', {}));
    const closed = nextEvent<CloseInfo>(ws, 'close');
    await ws.close();
    expect(await serverClose).toBe(1000);
    expect(await closed).toMatchObject({ willReconnect: false });
    expect(await pending).toMatchObject({ code: 'CLOSED' });
    await expect(ws.call('system.ping')).rejects.toMatchObject({ code: 'CLOSED' });
    await sleep(150);
    expect(server.upgrades).toHaveLength(1);
    expect(ws.state).toBe('closed');
  });
});

// Calls before connect, bad arguments, typing.
describe('createWsClient', () => {
  it('rejects calls made before connect with NOT_CONNECTED', async () => {
    const server = await startServer();
    const ws = client(server);
    await expect(ws.call('system.ping')).rejects.toMatchObject({ code: 'NOT_CONNECTED' });
    expect(server.received).toEqual([]);
  });

  it('lets calls made during the first connect wait for it', async () => {
    const server = await startServer();
    const ws = client(server);
    const connecting = ws.connect();
    const early = ws.call('echo', { early: true });
    await connecting;
    await expect(early).resolves.toEqual({ early: true });
  });

  it('rejects connect with CONNECT_FAILED when nothing listens, without retrying', async () => {
    const server = await startServer();
    const url = server.wsUrl;
    await server.stop();
    servers.splice(servers.indexOf(server), 1);
    const ws = createWsClient({ url, token: TOKEN });
    clients.push(ws);
    const reconnects: unknown[] = [];
    ws.on('reconnecting', (info) => reconnects.push(info));
    const error = await rejection(ws.connect());
    expect(error).toMatchObject({ name: 'ClientError', code: 'CONNECT_FAILED' });
    expect(reconnects).toEqual([]);
    await expect(ws.call('system.ping')).rejects.toMatchObject({ code: 'NOT_CONNECTED' });
  });

  it('rejects bad arguments and bad options with client errors', async () => {
    expect(() => createWsClient({ url: 'http://127.0.0.1:1/ws' })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS' }),
    );
    expect(() => createWsClient({ url: 'ws://127.0.0.1:1/ws', requestTimeoutMs: -5 })).toThrow(ClientError);
    const server = await startServer();
    const ws = client(server);
    await ws.connect();
    await expect(ws.call('echo', 'not an object' as never)).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    await expect(ws.call('')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await expect(ws.call('echo', cyclic)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(ws.call('system.ping')).resolves.toMatchObject({ pong: true });
  });

  it('types known methods and falls back to unknown for others', () => {
    const ws = createWsClient({ url: 'ws://127.0.0.1:1/ws' });
    expectTypeOf(ws.call<'system.ping'>).returns.resolves.toEqualTypeOf<{ pong: true; ts: number }>();
    expectTypeOf(ws.call<'rpc.discover'>).returns.resolves.toEqualTypeOf<OpenRpcDocument>();
    expectTypeOf(ws.call<'tokens.revoke'>)
      .parameter(1)
      .toEqualTypeOf<{ id: string; force?: boolean }>();
    expectTypeOf(ws.call<'memory.search'>).returns.resolves.toEqualTypeOf<{ results: MemorySearchEntry[] }>();
    expectTypeOf(ws.call<'no.such.method'>).returns.resolves.toBeUnknown();
    ws.on('heartbeat', (params) => expectTypeOf(params).toEqualTypeOf<{ ts: number }>());
    ws.on('agent.custom', (params) => expectTypeOf(params).toBeUnknown());
  });
});
