import { defineMethod } from '@agentd/rpc-core';
import {
  jsonRpcErrorExamples,
  jsonRpcNotificationExamples,
  jsonRpcSubtractExamples,
} from '@agentd/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openRaw, postRpc, type RawSocket, startTestDaemon, type TestDaemon } from './helpers.js';

// The methods the JSON-RPC 2.0 specification's section 7 examples call, served by the real daemon.
const specMethods = [
  defineMethod({
    name: 'subtract',
    scope: 'rpc',
    params: z.union([
      z.tuple([z.number(), z.number()]),
      z.object({ minuend: z.number(), subtrahend: z.number() }),
    ]),
    handler: (params) => (Array.isArray(params) ? params[0] - params[1] : params.minuend - params.subtrahend),
  }),
  defineMethod({ name: 'update', scope: 'rpc', params: z.array(z.number()), handler: () => null }),
  defineMethod({ name: 'notify_hello', scope: 'rpc', params: z.array(z.number()), handler: () => null }),
  defineMethod({ name: 'notify_sum', scope: 'rpc', params: z.array(z.number()), handler: () => null }),
  defineMethod({
    name: 'sum',
    scope: 'rpc',
    params: z.array(z.number()),
    handler: (params) => params.reduce((a, b) => a + b, 0),
  }),
  defineMethod({ name: 'get_data', scope: 'rpc', params: z.object({}), handler: () => ['hello', 5] }),
];

let td: TestDaemon;
let socket: RawSocket;

/** Sends text and returns the next message the server sends. */
async function exchange(text: string): Promise<unknown> {
  socket.send(text);
  return socket.next();
}

/** Sends text that must get no answer: a ping sent right after must be the next message. */
async function expectSilence(text: string): Promise<void> {
  socket.send(text);
  socket.send('{"jsonrpc":"2.0","method":"system.ping","id":"after"}');
  const next = (await socket.next()) as { id: unknown };
  expect(next.id).toBe('after');
}

beforeAll(async () => {
  td = await startTestDaemon({ methods: specMethods, config: { gateway: { wsHeartbeatMs: 0 } } });
  socket = await openRaw(td.daemon.wsUrl);
});
afterAll(async () => {
  socket.close();
  await td.stop();
});

describe('JSON-RPC 2.0 specification section 7 over the daemon WebSocket', () => {
  it.each(jsonRpcSubtractExamples)('answers rpc call with $case', async ({ text, answer }) => {
    expect(await exchange(text)).toEqual(answer);
  });

  it('sends nothing for notifications, even of unknown methods', async () => {
    for (const text of jsonRpcNotificationExamples) await expectSilence(text);
  });

  it.each(jsonRpcErrorExamples)('answers $case', async ({ text, answer }) => {
    expect(await exchange(text)).toEqual(answer);
  });

  it('answers an array of -32600 for batches of invalid members', async () => {
    const one = (await exchange('[1]')) as unknown[];
    expect(one).toHaveLength(1);
    expect(one[0]).toMatchObject({ error: { code: -32600 }, id: null });
    const three = (await exchange('[1,2,3]')) as unknown[];
    expect(three).toHaveLength(3);
    for (const entry of three) expect(entry).toMatchObject({ error: { code: -32600 }, id: null });
  });

  it('answers a mixed batch in request order, leaving out notifications', async () => {
    const text = `[
      {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},
      {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},
      {"jsonrpc": "2.0", "method": "subtract", "params": [42,23], "id": "2"},
      {"foo": "boo"},
      {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},
      {"jsonrpc": "2.0", "method": "get_data", "id": "9"}
    ]`;
    const answer = (await exchange(text)) as Array<Record<string, unknown>>;
    expect(answer).toHaveLength(5);
    expect(answer[0]).toEqual({ jsonrpc: '2.0', result: 7, id: '1' });
    expect(answer[1]).toEqual({ jsonrpc: '2.0', result: 19, id: '2' });
    expect(answer[2]).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 }, id: null });
    expect(answer[3]).toMatchObject({ jsonrpc: '2.0', error: { code: -32601 }, id: '5' });
    expect(answer[4]).toEqual({ jsonrpc: '2.0', result: ['hello', 5], id: '9' });
  });

  it('sends nothing for a batch of notifications only', async () => {
    await expectSilence(`[
      {"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]},
      {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}
    ]`);
  });

  it('gives the same answers over HTTP POST /rpc', async () => {
    const single = await postRpc(
      td.daemon.url,
      '{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}',
    );
    expect(single).toEqual({ status: 200, body: { jsonrpc: '2.0', result: 19, id: 1 } });
    const notification = await postRpc(
      td.daemon.url,
      '{"jsonrpc": "2.0", "method": "update", "params": [1,2]}',
    );
    expect(notification.status).toBe(204);
    const batch = await postRpc(
      td.daemon.url,
      '[{"jsonrpc":"2.0","method":"sum","params":[1,2],"id":1},{"jsonrpc":"2.0","method":"get_data","id":2}]',
    );
    expect(batch.body).toEqual([
      { jsonrpc: '2.0', result: 3, id: 1 },
      { jsonrpc: '2.0', result: ['hello', 5], id: 2 },
    ]);
    const parse = await postRpc(td.daemon.url, '{"jsonrpc": "2.0", "method": "foobar, "params"');
    expect(parse.body).toMatchObject({ error: { code: -32700 }, id: null });
  });
});
