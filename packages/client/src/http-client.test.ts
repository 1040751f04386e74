import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, expectTypeOf, it } from 'vitest';
import { rejection, TestServer, WireFailure } from '../test/json-rpc-server.js';
import { ClientError, RpcCallError } from './errors.js';
import { createHttpClient } from './http-client.js';

const TOKEN = 'http-token-456';

const handlers = {
  'system.ping': () => ({ pong: true, ts: Date.now() }),
  echo: (params: unknown) => params,
  fail: () => {
    throw new WireFailure(-32004, 'Agent not found: ghost', { id: 'ghost' });
  },
  slow: async () => {
    await sleep(500);
    return 'late';
  },
};

const servers: TestServer[] = [];
const rawServers: Server[] = [];

async function startServer(): Promise<TestServer> {
  const server = await TestServer.start({ token: TOKEN, handlers });
  servers.push(server);
  return server;
}

/** A server that answers every request with whatever `reply` writes, to feed the client odd answers. */
async function startRawServer(
  reply: (request: IncomingMessage, response: ServerResponse) => void,
): Promise<string> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => reply(request, response));
  });
  rawServers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A client of a raw server that answers every request with `status` and `answer` as JSON. */
async function clientOfServerAnswering(status: number, answer: unknown) {
  const url = await startRawServer((_request, response) =>
    response.writeHead(status).end(JSON.stringify(answer)),
  );
  return createHttpClient({ url, token: TOKEN });
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.stop(1000)));
  await Promise.all(
    rawServers.splice(0).map(
      (server) =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    ),
  );
});

describe('createHttpClient', () => {
  it('posts a JSON-RPC request to /rpc with the bearer token and returns the result', async () => {
    const server = await startServer();
    const http = createHttpClient({ url: server.httpUrl, token: TOKEN });
    const pong = await http.call('system.ping');
    expect(pong).toMatchObject({ pong: true });
    await expect(http.call('echo', { deep: { list: [1, 'two'] } })).resolves.toEqual({
      deep: { list: [1, 'two'] },
    });
    expect(server.received.at(-1)).toMatchObject({ jsonrpc: '2.0', method: 'echo', id: expect.any(Number) });
  });

  it('keeps a path prefix of the base URL', async () => {
    let path = '';
    const url = await startRawServer((request, response) => {
      path = request.url ?? '';
      response.writeHead(200).end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: 'ok' }));
    });
    const http = createHttpClient({ url: `${url}/agentd/`, token: TOKEN });
    await expect(http.call('anything')).resolves.toBe('ok');
    expect(path).toBe('/agentd/rpc');
  });

  it('throws an RpcCallError with the wire code, message and data', async () => {
    const server = await startServer();
    const http = createHttpClient({ url: server.httpUrl, token: TOKEN });
    const error = await rejection(http.call('fail', {}));
    expect(error).toBeInstanceOf(RpcCallError);
    expect(error).toMatchObject({
      code: -32004,
      message: 'Agent not found: ghost',
      data: { id: 'ghost' },
      method: 'fail',
    });
  });

  it('throws UNAUTHORIZED carrying the JSON-RPC error on HTTP 401', async () => {
    const server = await startServer();
    const http = createHttpClient({ url: server.httpUrl, token: 'wrong' });
    const error = await rejection(http.call('system.ping'));
    expect(error).toBeInstanceOf(ClientError);
    expect(error).toMatchObject({ code: 'UNAUTHORIZED', data: { code: -32001, message: 'Unauthorized' } });
    expect((error as ClientError).cause).toBeInstanceOf(RpcCallError);
    await expect(http.notify('echo', {})).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    await expect(http.batch([{ method: 'echo' }])).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it('throws UNAUTHORIZED on a 401 whose body is not JSON', async () => {
    const url = await startRawServer((_request, response) => response.writeHead(401).end('go away'));
    const http = createHttpClient({ url, token: TOKEN });
    await expect(http.call('system.ping')).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
      data: { status: 401, body: 'go away' },
    });
  });

  it('throws BAD_RESPONSE when the answer is not JSON or not a JSON-RPC response', async () => {
    let body = '<html>bad gateway</html>';
    let status = 502;
    const url = await startRawServer((_request, response) => response.writeHead(status).end(body));
    const http = createHttpClient({ url, token: TOKEN });
    const error = await rejection(http.call('system.ping'));
    expect(error).toBeInstanceOf(ClientError);
    expect(error).toMatchObject({
      code: 'BAD_RESPONSE',
      data: { status: 502, body: '<html>bad gateway</html>' },
    });

    status = 200;
    body = JSON.stringify({ hello: 'world' });
    await expect(http.call('system.ping')).rejects.toMatchObject({ code: 'BAD_RESPONSE' });
    body = JSON.stringify({ jsonrpc: '2.0', id: 999_999, result: 'someone else' });
    await expect(http.call('system.ping')).rejects.toMatchObject({ code: 'BAD_RESPONSE' });
    body = '';
    await expect(http.call('system.ping')).rejects.toMatchObject({ code: 'BAD_RESPONSE' });
  });

  it('maps an error answer with id null to an RpcCallError', async () => {
    const http = await clientOfServerAnswering(413, {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: 'Message too large' },
    });
    await expect(http.call('echo', { big: true })).rejects.toMatchObject({
      name: 'RpcCallError',
      code: -32600,
    });
  });

  it('sends notifications without an id and accepts 204', async () => {
    const server = await startServer();
    const http = createHttpClient({ url: server.httpUrl, token: TOKEN });
    await expect(http.notify('echo', { note: 1 })).resolves.toBeUndefined();
    expect(server.received.at(-1)).toEqual({ jsonrpc: '2.0', method: 'echo', params: { note: 1 } });
  });

  it('throws BAD_RESPONSE when a notification gets a body instead of 204', async () => {
    const http = await clientOfServerAnswering(200, { jsonrpc: '2.0', id: null, result: 'unexpected' });
    await expect(http.notify('echo', {})).rejects.toMatchObject({
      code: 'BAD_RESPONSE',
      data: { status: 200 },
    });
  });

  it('returns batch results in request order with per-entry errors and undefined for notifications', async () => {
    const server = await startServer();
    const http = createHttpClient({ url: server.httpUrl, token: TOKEN });
    const results = await http.batch([
      { method: 'echo', params: { n: 1 } },
      { method: 'echo', params: { n: 2 }, notification: true },
      { method: 'fail' },
      { method: 'system.ping' },
    ] as const);
    expect(results[0]).toEqual({ n: 1 });
    expect(results[1]).toBeUndefined();
    expect(results[2]).toBeInstanceOf(RpcCallError);
    expect(results[2]).toMatchObject({ code: -32004, method: 'fail' });
    expect(results[3]).toMatchObject({ pong: true });
    await expect(http.batch([{ method: 'echo', params: {}, notification: true }])).resolves.toEqual([
      undefined,
    ]);
    await expect(http.batch([])).resolves.toEqual([]);
  });

  it('matches batch answers by id even when the server reorders them', async () => {
    const http = await clientOfServerAnswering(200, [
      { jsonrpc: '2.0', id: 2, result: 'second' },
      { jsonrpc: '2.0', id: 1, result: 'first' },
    ]);
    await expect(http.batch([{ method: 'a' }, { method: 'b' }])).resolves.toEqual(['first', 'second']);
    // Ids keep counting, so a second batch (ids 3 and 4) finds no answers and the client says so.
    await expect(http.batch([{ method: 'a' }, { method: 'b' }])).rejects.toMatchObject({
      code: 'BAD_RESPONSE',
    });
  });

  it('rejects a whole batch with the RpcCallError of a single error answer', async () => {
    const http = await clientOfServerAnswering(200, {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: 'Batch too large' },
    });
    await expect(http.batch([{ method: 'a' }])).rejects.toMatchObject({ name: 'RpcCallError', code: -32600 });
  });

  it('throws TIMEOUT, ABORTED and CONNECT_FAILED for the local failures', async () => {
    const server = await startServer();
    const http = createHttpClient({ url: server.httpUrl, token: TOKEN, requestTimeoutMs: 50 });
    await expect(http.call('slow', {})).rejects.toMatchObject({ code: 'TIMEOUT', data: { timeoutMs: 50 } });

    const controller = new AbortController();
    const pending = rejection(http.call('slow', {}, { timeoutMs: 5_000, signal: controller.signal }));
    await sleep(20);
    controller.abort();
    expect(await pending).toMatchObject({ code: 'ABORTED' });
    await expect(http.call('echo', {}, { signal: AbortSignal.abort() })).rejects.toMatchObject({
      code: 'ABORTED',
    });

    const url = server.httpUrl;
    await server.stop();
    servers.splice(0);
    const offline = createHttpClient({ url, token: TOKEN });
    await expect(offline.call('system.ping')).rejects.toMatchObject({ code: 'CONNECT_FAILED' });
  });

  it('uses an injected fetch', async () => {
    const seen: Array<{ url: string; headers: Record<string, string>; body: string }> = [];
    const http = createHttpClient({
      url: 'http://daemon.invalid:7420',
      token: TOKEN,
      fetch: async (url, init) => {
        seen.push({ url, headers: init.headers, body: init.body });
        return {
          status: 200,
          text: async () => JSON.stringify({ jsonrpc: '2.0', id: 1, result: { pong: true, ts: 1 } }),
        };
      },
    });
    await expect(http.call('system.ping')).resolves.toEqual({ pong: true, ts: 1 });
    expect(seen[0]!.url).toBe('http://daemon.invalid:7420/rpc');
    expect(seen[0]!.headers.Authorization).toBe(`Bearer ${TOKEN}`);
    expect(JSON.parse(seen[0]!.body)).toEqual({ jsonrpc: '2.0', method: 'system.ping', id: 1 });
  });

  it('rejects unusable options with INVALID_OPTIONS', () => {
    expect(() => createHttpClient({ url: 'ws://127.0.0.1:1' })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS' }),
    );
    expect(() => createHttpClient({ url: 'not a url' })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS' }),
    );
  });

  it('types known methods like the WebSocket client', () => {
    const http = createHttpClient({ url: 'http://127.0.0.1:1' });
    expectTypeOf(http.call<'config.history'>).returns.resolves.toEqualTypeOf<{
      entries: Array<{ sha: string; date: string; message: string }>;
    }>();
    expectTypeOf(http.call<'anything.else'>).returns.resolves.toBeUnknown();
  });
});
