import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDispatcher } from './dispatcher.js';
import { RpcError } from './errors.js';
import { recordingLogger } from '@agentd/test-support';
import { adminIdentity, exampleRegistry, rpcIdentity } from './internal/test-support.js';
import { defineMethod, type Identity } from './method.js';
import { createSseRpcHandler } from './sse-handler.js';
import type { SseWriter } from './sse-writer.js';

let server: Server | undefined;

afterEach(async () => {
  if (server) {
    server.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  }
});

const tokens: Record<string, Identity> = { admin: adminIdentity, rpc: rpcIdentity };

/** A method that streams `count` words and answers their number; `fail` throws after streaming. */
const countMethod = (open: () => SseWriter) =>
  defineMethod({
    name: 'test.count',
    scope: 'admin',
    params: z
      .object({ word: z.string().min(1), count: z.coerce.number().int().min(1), fail: z.string().optional() })
      .strict(),
    handler: async ({ word, count, fail }, context) => {
      const sse = open();
      sse.send({ event: 'start', data: { traceId: context.traceId.length > 0 } });
      for (let index = 0; index < count; index++) sse.send({ event: 'word', data: word });
      if (fail === 'rpc') throw RpcError.notFound('Thing', 'x');
      if (fail === 'internal') throw new Error('database password is hunter2');
      return { words: count };
    },
  });

async function serve(extra: { wrapped?: string[]; logger?: ReturnType<typeof recordingLogger> } = {}) {
  const dispatcher = createDispatcher({
    registry: exampleRegistry(),
    ...(extra.logger ? { logger: extra.logger } : {}),
    wrap: (context, run) => {
      extra.wrapped?.push(context.method);
      return run();
    },
  });
  const handler = createSseRpcHandler({
    dispatcher,
    authenticate: (request) =>
      tokens[String(request.headers.authorization ?? '').replace('Bearer ', '')] ?? null,
    method: countMethod,
    heartbeatMs: 0,
  });
  server = createServer((request, response) => void handler(request, response));
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/stream`;
}

/** The events of a finished stream, as `[event, data]` pairs. */
async function events(response: Response): Promise<Array<[string, unknown]>> {
  const text = await response.text();
  return text
    .split('\n\n')
    .filter((block) => block.includes('data:'))
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
      const data = /^data: (.*)$/m.exec(block)?.[1] ?? 'null';
      return [event, JSON.parse(data)];
    });
}

const as = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

describe('createSseRpcHandler', () => {
  it('runs the method through the dispatcher and ends the stream with its result as done', async () => {
    const wrapped: string[] = [];
    const url = await serve({ wrapped });
    const response = await fetch(`${url}?word=hi&count=2`, as('admin'));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    expect(await events(response)).toEqual([
      ['start', { traceId: true }],
      ['word', 'hi'],
      ['word', 'hi'],
      ['done', { words: 2 }],
    ]);
    expect(wrapped).toEqual(['test.count']);
  });

  it('answers JSON before streaming: 405, 401, 403 for the scope, 400 for params', async () => {
    const url = await serve();
    const post = await fetch(`${url}?word=hi&count=1`, { method: 'POST', ...as('admin') });
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET']);
    const anonymous = await fetch(`${url}?word=hi&count=1`);
    expect([anonymous.status, anonymous.headers.get('www-authenticate')]).toEqual([401, 'Bearer']);
    expect(await anonymous.json()).toEqual({ error: { code: -32001, message: 'Unauthorized' } });
    const narrow = await fetch(`${url}?word=hi&count=1`, as('rpc'));
    expect(narrow.status).toBe(403);
    expect(await narrow.json()).toEqual({
      error: { code: -32603, message: "Insufficient scope: requires 'admin'" },
    });
    const bad = await fetch(`${url}?count=1&extra=1`, as('admin'));
    expect(bad.status).toBe(400);
    const body = (await bad.json()) as {
      error: { code: number; data: { issues: Array<{ path: string[] }> } };
    };
    expect(body.error.code).toBe(-32602);
    expect(body.error.data.issues.map((issue) => issue.path.join('.'))).toEqual(['word', 'extra']);
  });

  it('ends an open stream with an error event: the RpcError as is, anything else as -32603, logged', async () => {
    const logger = recordingLogger();
    const url = await serve({ logger });
    const notFound = await events(await fetch(`${url}?word=a&count=1&fail=rpc`, as('admin')));
    expect(notFound.at(-1)).toEqual([
      'error',
      { code: -32004, message: 'Thing not found: x', data: { kind: 'Thing', id: 'x' } },
    ]);
    const internal = await events(await fetch(`${url}?word=a&count=1&fail=internal`, as('admin')));
    expect(internal.at(-1)).toEqual(['error', { code: -32603, message: 'Internal error' }]);
    expect(JSON.stringify(internal)).not.toContain('hunter2');
    expect(
      logger.entries.some((line) => line.level === 'error' && line.message === 'rpc handler failed'),
    ).toBe(true);
  });
});
