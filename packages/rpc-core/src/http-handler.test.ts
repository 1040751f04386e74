import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createDispatcher } from './dispatcher.js';
import { createHttpRpcHandler, type HttpRpcHandlerOptions } from './http-handler.js';
import { closeServer, exampleRegistry, rpcFailure } from './internal/test-support.js';
import { authenticateFromTokens } from './internal/ws-test-support.js';

let server: Server | undefined;

afterEach(async () => {
  if (server) await closeServer(server);
  server = undefined;
});

async function start(overrides: Partial<HttpRpcHandlerOptions> = {}): Promise<string> {
  const handler = createHttpRpcHandler({
    dispatcher: createDispatcher({ registry: exampleRegistry() }),
    authenticate: authenticateFromTokens,
    ...overrides,
  });
  server = createServer((request, response) => {
    void handler(request, response);
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/rpc`;
}

function post(url: string, body: string, token: string | null = 'rpc-token') {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body,
  });
}

describe('createHttpRpcHandler', () => {
  it('answers a single request with 200 and a JSON-RPC response', async () => {
    const url = await start();
    const response = await post(url, '{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await response.json()).toEqual({ jsonrpc: '2.0', result: 19, id: 1 });
  });

  it('answers a batch in request order', async () => {
    const url = await start();
    const response = await post(
      url,
      JSON.stringify([
        { jsonrpc: '2.0', method: 'sum', params: [1, 2], id: 'a' },
        { jsonrpc: '2.0', method: 'notify_hello', params: [1] },
        { jsonrpc: '2.0', method: 'context.show', id: 'b' },
      ]),
    );
    const body = (await response.json()) as Array<Record<string, unknown>>;
    expect(body.map((entry) => entry.id)).toEqual(['a', 'b']);
    expect(body[0]).toEqual({ jsonrpc: '2.0', result: 3, id: 'a' });
    expect(body[1]).toMatchObject({ result: { transport: 'http', clientId: 'client-a' } });
  });

  it('answers a notification with 204 and an empty body', async () => {
    const url = await start();
    const response = await post(url, '{"jsonrpc":"2.0","method":"update","params":[1]}');
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
  });

  it('answers a missing or unknown token with 401 and a JSON-RPC error body', async () => {
    const url = await start();
    for (const token of [null, 'wrong']) {
      const response = await post(url, '{"jsonrpc":"2.0","method":"get_data","id":1}', token);
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer');
      expect(await response.json()).toEqual(rpcFailure(-32001, 'Unauthorized', null));
    }
  });

  it('answers any method but POST with 405 and an Allow header', async () => {
    const url = await start();
    const response = await fetch(url, { headers: { authorization: 'Bearer rpc-token' } });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    expect(await response.json()).toMatchObject({ error: { code: -32600 }, id: null });
  });

  it('answers a body over maxBodyBytes with 413 and -32600', async () => {
    const url = await start({ maxBodyBytes: 100 });
    const response = await post(
      url,
      JSON.stringify({ jsonrpc: '2.0', method: 'x', params: { pad: 'y'.repeat(200) } }),
    );
    expect(response.status).toBe(413);
    const body = (await response.json()) as { error: { code: number; message: string } };
    expect(body.error.code).toBe(-32600);
    expect(body.error.message).toMatch(/^Request body too large: \d+ bytes, maximum is 100$/);
  });

  it('answers a chunked body that grows over maxBodyBytes with 413', async () => {
    const url = await start({ maxBodyBytes: 100 });
    const chunks = ['{"jsonrpc":"2.0",', `"pad":"${'z'.repeat(300)}"}`];
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
        controller.close();
      },
    });
    const response = await fetch(url, {
      method: 'POST',
      headers: { authorization: 'Bearer rpc-token' },
      body,
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({
      error: { code: -32600, message: 'Request body too large: more than 100 bytes' },
    });
  });

  it('answers invalid JSON with 200 and -32700', async () => {
    const url = await start();
    const response = await post(url, '{"jsonrpc"');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(rpcFailure(-32700, 'Parse error', null));
  });

  it('answers -32603 without leaking the thrown message', async () => {
    const url = await start();
    const response = await post(url, '{"jsonrpc":"2.0","method":"fail.internal","id":1}');
    const text = await response.text();
    expect(JSON.parse(text)).toEqual(rpcFailure(-32603, 'Internal error', 1));
    expect(text).not.toContain('hunter2');
  });

  it('answers 500 when the authenticate callback throws', async () => {
    const url = await start({
      authenticate: () => {
        throw new Error('store offline');
      },
    });
    const response = await post(url, '{"jsonrpc":"2.0","method":"get_data","id":1}');
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual(rpcFailure(-32603, 'Internal error', null));
  });
});
