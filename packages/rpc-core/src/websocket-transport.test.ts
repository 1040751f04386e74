import type { Server } from 'node:http';
import { connect as connectTcp } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { z } from 'zod';
import { createDispatcher } from './dispatcher.js';
import { recordingLogger } from '@agentd/test-support';
import { exampleRegistry, hangingMethod } from './internal/test-support.js';
import { authenticateFromTokens, connect, listen, type TestClient } from './internal/ws-test-support.js';
import { defineMethod, MethodRegistry } from './method.js';
import { createWebSocketTransport, type WebSocketTransportOptions } from './websocket-transport.js';

const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function start(overrides: Partial<WebSocketTransportOptions> = {}) {
  const logger = recordingLogger();
  const dispatcher = createDispatcher({
    registry: exampleRegistry(),
    maxBatchSize: 3,
    maxMessageBytes: 1000,
  });
  const transport = createWebSocketTransport({
    dispatcher,
    authenticate: authenticateFromTokens,
    heartbeatMs: 0,
    pingIntervalMs: 0,
    logger,
    ...overrides,
  });
  const { server, url } = await listen(transport);
  cleanups.push(async () => {
    await transport.close();
    await closeServer(server);
  });
  const clients: TestClient[] = [];
  cleanups.push(() => {
    for (const client of clients) client.socket.terminate();
  });
  async function client(token = 'rpc-token') {
    const opened = await connect(url, token);
    clients.push(opened);
    return opened;
  }
  return { transport, url, client, logger };
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10));
}

// Messages, limits, rate limiting and heartbeats.
/**
 * A transport with one method, `big {n?}`, whose answers fill a 64 KiB send queue at once;
 * closed by the test's cleanups.
 */
async function serveBigAnswers(answer: (n: number) => string, slowClientTimeoutMs: number) {
  const registry = new MethodRegistry().register(
    defineMethod({
      name: 'big',
      scope: 'rpc',
      params: z.object({ n: z.number().optional() }).strict(),
      handler: ({ n }) => answer(n ?? 0),
    }),
  );
  const logger = recordingLogger();
  const transport = createWebSocketTransport({
    dispatcher: createDispatcher({ registry }),
    authenticate: authenticateFromTokens,
    heartbeatMs: 0,
    pingIntervalMs: 0,
    maxBufferedBytes: 65_536,
    slowClientTimeoutMs,
    logger,
  });
  const { server, url } = await listen(transport);
  cleanups.push(async () => {
    await transport.close();
    await closeServer(server);
  });
  return { url, logger };
}

describe('createWebSocketTransport', () => {
  it('answers requests, batches and notifications over a real socket', async () => {
    const { client } = await start();
    const socket = await client();
    expect(await socket.call({ jsonrpc: '2.0', method: 'subtract', params: [42, 23], id: 1 })).toEqual({
      jsonrpc: '2.0',
      result: 19,
      id: 1,
    });
    socket.socket.send(JSON.stringify({ jsonrpc: '2.0', method: 'notify_hello', params: [7] }));
    expect(
      await socket.call([
        { jsonrpc: '2.0', method: 'sum', params: [1, 2, 4], id: 'a' },
        { jsonrpc: '2.0', method: 'notify_sum', params: [1] },
        { jsonrpc: '2.0', method: 'nope', id: 'b' },
      ]),
    ).toEqual([
      { jsonrpc: '2.0', result: 7, id: 'a' },
      { jsonrpc: '2.0', error: { code: -32601, message: 'Method not found: nope' }, id: 'b' },
    ]);
    expect(socket.received).toHaveLength(2);
  });

  it('answers an oversized batch, an empty batch and invalid JSON with the documented errors', async () => {
    const { client } = await start();
    const socket = await client();
    const batch = [1, 2, 3, 4].map((id) => ({ jsonrpc: '2.0', method: 'get_data', id }));
    expect(await socket.call(batch)).toMatchObject({ error: { code: -32600 }, id: null });
    expect(await socket.call('[]')).toMatchObject({ error: { code: -32600 }, id: null });
    expect(await socket.call('{"jsonrpc":')).toEqual({
      jsonrpc: '2.0',
      error: { code: -32700, message: 'Parse error' },
      id: null,
    });
  });

  it('answers an oversized message with -32600 before parsing, even when it is not JSON', async () => {
    const { client } = await start();
    const socket = await client();
    expect(await socket.call('x'.repeat(2500))).toEqual({
      jsonrpc: '2.0',
      error: {
        code: -32600,
        message: 'Message too large: received 2500 characters, maximum is 1000',
        data: { received: 2500, maximum: 1000 },
      },
      id: null,
    });
    expect(await socket.call({ jsonrpc: '2.0', method: 'get_data', id: 2 })).toMatchObject({
      result: ['hello', 5],
    });
  });

  it('counts characters, not bytes, so a multi-byte message within the limit is served', async () => {
    const { client } = await start();
    const socket = await client();
    const message = 'é'.repeat(900);
    const answer = await socket.call({ jsonrpc: '2.0', method: 'chat.echo', params: { message }, id: 1 });
    expect(answer).toEqual({ jsonrpc: '2.0', result: { message }, id: 1 });
  });

  it('closes the socket with 1009 when a frame exceeds maxPayloadBytes', async () => {
    const { client } = await start({ maxPayloadBytes: 4000 });
    const socket = await client();
    socket.socket.send('x'.repeat(5000));
    expect((await socket.closed).code).toBe(1009);
  });

  it('answers a binary frame with -32700', async () => {
    const { client } = await start();
    const socket = await client();
    socket.socket.send(Buffer.from('{"jsonrpc":"2.0","method":"get_data","id":1}'), { binary: true });
    expect(await socket.next()).toEqual({
      jsonrpc: '2.0',
      error: { code: -32700, message: 'Parse error: binary frames are not accepted' },
      id: null,
    });
  });

  it('discards messages over the rate limit and answers -32000 with a null id', async () => {
    let allowed = 2;
    let handled = 0;
    const { client } = await start({ createRateLimiter: () => ({ tryAcquire: () => allowed-- > 0 }) });
    const socket = await client();
    for (const id of [1, 2, 3]) {
      socket.socket.send(JSON.stringify({ jsonrpc: '2.0', method: 'get_data', id }));
    }
    const answers = [await socket.next(), await socket.next(), await socket.next()] as Array<
      Record<string, unknown>
    >;
    for (const answer of answers) if ('result' in answer) handled += 1;
    expect(handled).toBe(2);
    expect(answers).toContainEqual({
      jsonrpc: '2.0',
      error: { code: -32000, message: 'Message rate limit exceeded' },
      id: null,
    });
  });

  it('gives each connection its own rate limiter', async () => {
    let created = 0;
    const { client } = await start({
      createRateLimiter: () => {
        created += 1;
        return { tryAcquire: () => true };
      },
    });
    await client();
    await client('other-token');
    expect(created).toBe(2);
  });

  it('sends heartbeat notifications at the configured interval', async () => {
    const { client } = await start({ heartbeatMs: 20, now: () => 1234 });
    const socket = await client();
    expect(await socket.next()).toEqual({ jsonrpc: '2.0', method: 'heartbeat', params: { ts: 1234 } });
    expect(await socket.next()).toEqual({ jsonrpc: '2.0', method: 'heartbeat', params: { ts: 1234 } });
  });

  it('sends no heartbeat when heartbeatMs is 0', async () => {
    const { client } = await start({ heartbeatMs: 0 });
    const socket = await client();
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(socket.received).toEqual([]);
  });
});

// Authentication, targeted notifications, liveness, logging and close.
describe('createWebSocketTransport', () => {
  it('accepts the upgrade and then closes with 4001 when authentication fails', async () => {
    const { client, transport, logger } = await start();
    const socket = await client('wrong-token');
    expect(await socket.closed).toEqual({ code: 4001, reason: 'Unauthorized' });
    expect(transport.connectionCount).toBe(0);
    expect(logger.entries.some((line) => line.level === 'warn' && line.fields.errorKind === 'auth')).toBe(
      true,
    );
  });

  it('accepts the token as a query parameter', async () => {
    const { url, transport } = await start();
    const socket = await connect(`${url}?token=rpc-token`);
    cleanups.push(() => socket.socket.terminate());
    expect(await socket.call({ jsonrpc: '2.0', method: 'get_data', id: 1 })).toMatchObject({
      result: ['hello', 5],
    });
    expect(transport.connectionCount).toBe(1);
  });

  it('awaits an asynchronous authenticate callback', async () => {
    const { client } = await start({
      authenticate: async (request) => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        return authenticateFromTokens(request);
      },
    });
    const socket = await client();
    expect(await socket.call({ jsonrpc: '2.0', method: 'context.show', id: 1 })).toMatchObject({
      result: { clientId: 'client-a', transport: 'ws' },
    });
  });

  it('closes with 1011 when the authenticate callback throws', async () => {
    const { client } = await start({
      authenticate: () => {
        throw new Error('token store offline');
      },
    });
    const socket = await client();
    expect(await socket.closed).toEqual({ code: 1011, reason: 'Internal error' });
  });

  it('sends targeted notifications only to the sockets of that client and broadcasts to all', async () => {
    const { client, transport } = await start();
    const first = await client('rpc-token');
    const second = await client('rpc-token-2');
    const other = await client('other-token');
    expect(transport.notify('client-a', 'session.completed', { sessionKey: 'k', result: 'done' })).toBe(2);
    const expected = {
      jsonrpc: '2.0',
      method: 'session.completed',
      params: { sessionKey: 'k', result: 'done' },
    };
    expect(await first.next()).toEqual(expected);
    expect(await second.next()).toEqual(expected);
    expect(transport.broadcast('subagent.announced', { runId: 'r1' })).toBe(3);
    const announced = { jsonrpc: '2.0', method: 'subagent.announced', params: { runId: 'r1' } };
    expect(await other.next()).toEqual(announced);
    expect(await first.next()).toEqual(announced);
    expect(other.received).toEqual([announced]);
    expect(transport.notify('nobody', 'x.y')).toBe(0);
  });

  it('sends notifyWhere notifications only to the connections whose identity matches', async () => {
    const { client, transport } = await start();
    const chosen = await client('rpc-token');
    const other = await client('other-token');
    const sent = transport.notifyWhere((identity) => identity.tokenId === 'tok-rpc', 'approval.requested', {
      id: 'a1',
    });
    expect(sent).toBe(1);
    expect(await chosen.next()).toEqual({
      jsonrpc: '2.0',
      method: 'approval.requested',
      params: { id: 'a1' },
    });
    expect(transport.broadcast('after', {})).toBe(2);
    expect(await other.next()).toEqual({ jsonrpc: '2.0', method: 'after', params: {} });
    expect(other.received).toEqual([{ jsonrpc: '2.0', method: 'after', params: {} }]);
  });

  it('closes the connections matched by closeWhere and leaves the others open', async () => {
    const { client, transport } = await start();
    const revoked = await client('rpc-token');
    const kept = await client('other-token');
    expect(transport.closeWhere((identity) => identity.tokenId === 'tok-rpc', 4001, 'Token revoked')).toBe(1);
    expect(await revoked.closed).toEqual({ code: 4001, reason: 'Token revoked' });
    expect(await kept.call({ jsonrpc: '2.0', method: 'get_data', id: 1 })).toMatchObject({
      result: ['hello', 5],
    });
    await until(() => transport.connectionCount === 1);
  });

  it('terminates a peer that stops answering pings', async () => {
    const { url, transport, logger } = await start({ pingIntervalMs: 40 });
    const { port } = new URL(url);
    // A raw TCP client completes the handshake and then never answers a ping.
    const raw = connectTcp(Number(port), '127.0.0.1');
    cleanups.push(() => {
      raw.destroy();
    });
    await new Promise<void>((resolve) => raw.once('connect', () => resolve()));
    raw.write(
      'GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n' +
        'Authorization: Bearer rpc-token\r\n\r\n',
    );
    const ended = new Promise<void>((resolve) => raw.once('close', () => resolve()));
    raw.resume();
    await until(() => transport.connectionCount === 1);
    await ended;
    await until(() => transport.connectionCount === 0);
    expect(logger.entries.some((line) => line.message === 'websocket peer unresponsive')).toBe(true);
  });

  it('keeps a peer that answers pings connected', async () => {
    const { client, transport } = await start({ pingIntervalMs: 20 });
    const socket = await client();
    let pings = 0;
    socket.socket.on('ping', () => {
      pings += 1;
    });
    await until(() => pings >= 4);
    expect(transport.connectionCount).toBe(1);
    expect(socket.socket.readyState).toBe(WebSocket.OPEN);
  });

  it('aborts the handler signal when the connection closes', async () => {
    const registry = exampleRegistry();
    let seen: AbortSignal | undefined;
    registry.register(
      hangingMethod((signal) => {
        seen = signal;
      }),
    );
    const dispatcher = createDispatcher({ registry });
    const { client } = await start({ dispatcher });
    const socket = await client();
    socket.socket.send(JSON.stringify({ jsonrpc: '2.0', method: 'hang.forever', id: 1 }));
    await until(() => seen !== undefined);
    socket.socket.close();
    await until(() => seen?.aborted === true);
    expect(seen?.reason).toMatchObject({ code: 'TRANSPORT_CLOSED' });
  });

  it('logs connection open and close with the canonical fields', async () => {
    const { client, logger, transport } = await start();
    const socket = await client();
    socket.socket.close(1000, 'bye');
    await socket.closed;
    await until(() => transport.connectionCount === 0);
    const opened = logger.entries.find((line) => line.message === 'websocket connected');
    const closed = logger.entries.find((line) => line.message === 'websocket closed');
    expect(opened?.fields).toMatchObject({ clientId: 'client-a', activeConnections: 1 });
    expect(closed?.fields).toMatchObject({
      connectionId: opened?.fields.connectionId,
      clientId: 'client-a',
      closeCode: 1000,
      closeReason: 'bye',
      activeConnections: 0,
    });
    expect(typeof closed?.fields.connectionDurationMs).toBe('number');
  });

  describe('close', () => {
    it('lets an in-flight request finish, then closes every socket with 1001', async () => {
      const { client, transport, url } = await start();
      const socket = await client();
      const idle = await client('other-token');
      socket.socket.send(
        JSON.stringify({ jsonrpc: '2.0', method: 'slow.wait', params: { ms: 150 }, id: 'slow' }),
      );
      await new Promise((resolve) => setTimeout(resolve, 30));
      const closing = transport.close();
      expect(await socket.next()).toEqual({
        jsonrpc: '2.0',
        result: { waited: 150, aborted: false },
        id: 'slow',
      });
      expect(await socket.closed).toEqual({ code: 1001, reason: 'Server shutting down' });
      expect(await idle.closed).toEqual({ code: 1001, reason: 'Server shutting down' });
      await closing;
      expect(transport.connectionCount).toBe(0);
      await expect(connect(url, 'rpc-token')).rejects.toThrow(/503/);
    });

    it('stops waiting for in-flight requests after shutdownTimeoutMs and aborts them', async () => {
      const { client, transport } = await start({ shutdownTimeoutMs: 50 });
      const socket = await client();
      socket.socket.send(
        JSON.stringify({ jsonrpc: '2.0', method: 'slow.wait', params: { ms: 1000 }, id: 1 }),
      );
      await new Promise((resolve) => setTimeout(resolve, 20));
      await transport.close();
      expect(await socket.closed).toEqual({ code: 1001, reason: 'Server shutting down' });
      expect(socket.received).toEqual([]);
    });
  });
});

describe('createWebSocketTransport backpressure', () => {
  it('stops reading a client that does not read its answers, closes it with 4009, and keeps serving others', async () => {
    const answer = 'x'.repeat(500_000);
    let served = 0;
    const { url, logger } = await serveBigAnswers(() => {
      served++;
      return answer;
    }, 300);
    const slow = await connect(url, 'rpc-token');
    const reader = await connect(url, 'rpc-token');
    cleanups.push(() => {
      slow.socket.terminate();
      reader.socket.terminate();
    });
    // 100 requests for 50 MB of answers the client never reads.
    slow.socket.pause();
    for (let id = 1; id <= 100; id++) slow.socket.send(`{"jsonrpc":"2.0","method":"big","id":${id}}`);

    await until(() => logger.entries.some((line) => line.message === 'websocket closed: client not reading'));
    const closedLine = logger.entries.find((line) => line.message === 'websocket closed: client not reading');
    expect(closedLine?.fields).toMatchObject({ closeCode: 4009, errorKind: 'resource' });
    // Reading stopped once the queue passed the cap: most requests were never read, and what the
    // server still held was the cap plus the answer that crossed it.
    expect(served).toBeLessThan(100);
    expect(closedLine?.fields.bufferedBytes as number).toBeLessThanOrEqual(65_536 + 2 * answer.length + 1000);

    reader.socket.send('{"jsonrpc":"2.0","method":"big","id":7}');
    expect(await reader.next()).toMatchObject({ id: 7, result: answer });
    // The slow client, reading again, finds its connection gone.
    slow.socket.resume();
    expect((await slow.closed).code).not.toBe(1000);
  });

  it('serves a client that reads slowly in bursts: every answer arrives in order across many stalls, none lost', async () => {
    const answer = (id: number) => `${id}:`.padEnd(200_000, 'y');
    // Long enough that a reader taking a burst every 20 ms never counts as stopped.
    const { url, logger } = await serveBigAnswers((n) => answer(n), 5_000);
    const client = await connect(url, 'rpc-token');
    cleanups.push(() => client.socket.terminate());
    // 40 requests sent at once (8 MB of answers), read 20 ms at a time with pauses between.
    const count = 40;
    for (let i = 0; i < count; i++)
      client.socket.send(`{"jsonrpc":"2.0","method":"big","params":{"n":${i}},"id":${i}}`);
    let bursts = 0;
    while (client.received.length < count) {
      client.socket.pause();
      await new Promise((resolve) => setTimeout(resolve, 20));
      client.socket.resume();
      await new Promise((resolve) => setTimeout(resolve, 2));
      bursts++;
      if (bursts > 2_000) throw new Error(`only ${client.received.length} answers arrived`);
    }
    // The server stalled on this connection more than once (its queue passed the cap).
    expect(
      logger.entries.filter((line) => line.message === 'websocket send queue full; reading paused').length,
    ).toBeGreaterThan(1);
    const answers = client.received as Array<{ id: number; result: string }>;
    expect(answers.map((message) => message.id)).toEqual(Array.from({ length: count }, (_, i) => i));
    for (const message of answers) expect(message.result).toBe(answer(message.id));
    expect(client.socket.readyState).toBe(client.socket.OPEN);
    expect(logger.entries.some((line) => line.message === 'websocket closed: client not reading')).toBe(
      false,
    );
  });
});
