import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDispatcher, type DispatcherOptions } from './dispatcher.js';
import { ErrorCodes, RpcCoreError } from './errors.js';
import {
  jsonRpcErrorExamples,
  jsonRpcNotificationExamples,
  jsonRpcSubtractExamples,
  recordingLogger,
} from '@agentd/test-support';
import { adminIdentity, connection, exampleRegistry } from './internal/test-support.js';
import { type AnyMethod, defineMethod, MethodRegistry } from './method.js';

function setup(overrides: Partial<Parameters<typeof createDispatcher>[0]> = {}) {
  let counter = 0;
  return createDispatcher({
    registry: exampleRegistry(),
    randomId: () => `id-${++counter}`,
    ...overrides,
  });
}

async function call(text: string, dispatcher = setup()): Promise<unknown> {
  const answer = await dispatcher.handle(text, connection());
  return answer === undefined ? undefined : JSON.parse(answer);
}

/** An `rpc`-scoped method for the probes below. */
function rpcMethod<P extends z.ZodType>(name: string, params: P, handler: (params: z.output<P>) => unknown) {
  return defineMethod({ name, scope: 'rpc', params, handler });
}

/** A dispatcher serving only `methods`, with `options` on top. */
function serving(methods: AnyMethod[], options: Partial<DispatcherOptions> = {}) {
  return createDispatcher({ registry: new MethodRegistry().register(...methods), ...options });
}

describe('createDispatcher', () => {
  describe('JSON-RPC 2.0 specification section 7 examples', () => {
    it.each(jsonRpcSubtractExamples)('answers a call with $case', async ({ text, answer }) => {
      expect(await call(text)).toEqual(answer);
    });

    it('sends nothing for notifications, even of an unknown method', async () => {
      for (const text of jsonRpcNotificationExamples) expect(await call(text)).toBeUndefined();
    });

    it.each(jsonRpcErrorExamples)('answers $case', async ({ text, answer }) => {
      expect(await call(text)).toEqual(answer);
    });

    it('answers a batch of non-objects with one -32600 per entry', async () => {
      const one = await call('[1]');
      expect(one).toEqual([
        { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request' }, id: null },
      ]);
      const three = (await call('[1,2,3]')) as unknown[];
      expect(three).toHaveLength(3);
      for (const entry of three) expect(entry).toMatchObject({ error: { code: -32600 }, id: null });
    });

    it('answers a mixed batch in request order and leaves out notifications', async () => {
      const text = JSON.stringify([
        { jsonrpc: '2.0', method: 'sum', params: [1, 2, 4], id: '1' },
        { jsonrpc: '2.0', method: 'notify_hello', params: [7] },
        { jsonrpc: '2.0', method: 'subtract', params: [42, 23], id: '2' },
        { foo: 'boo' },
        { jsonrpc: '2.0', method: 'foo.get', params: { name: 'myself' }, id: '5' },
        { jsonrpc: '2.0', method: 'get_data', id: '9' },
      ]);
      expect(await call(text)).toEqual([
        { jsonrpc: '2.0', result: 7, id: '1' },
        { jsonrpc: '2.0', result: 19, id: '2' },
        {
          jsonrpc: '2.0',
          error: { code: -32600, message: "Invalid Request: jsonrpc must be exactly '2.0'" },
          id: null,
        },
        { jsonrpc: '2.0', error: { code: -32601, message: 'Method not found: foo.get' }, id: '5' },
        { jsonrpc: '2.0', result: ['hello', 5], id: '9' },
      ]);
    });

    it('sends nothing for a batch made only of notifications', async () => {
      const text = JSON.stringify([
        { jsonrpc: '2.0', method: 'notify_sum', params: [1, 2, 4] },
        { jsonrpc: '2.0', method: 'notify_hello', params: [7] },
      ]);
      expect(await call(text)).toBeUndefined();
    });
  });

  describe('envelope validation', () => {
    it('rejects an id that is neither a string, an integer nor null', async () => {
      for (const id of [1.5, true, { a: 1 }, [1]]) {
        const answer = await call(JSON.stringify({ jsonrpc: '2.0', method: 'get_data', id }));
        expect(answer).toEqual({
          jsonrpc: '2.0',
          error: { code: -32600, message: 'Invalid Request: id must be a string, an integer or null' },
          id: null,
        });
      }
    });

    it('answers a request whose id is null with a null id', async () => {
      expect(await call('{"jsonrpc":"2.0","method":"get_data","id":null}')).toEqual({
        jsonrpc: '2.0',
        result: ['hello', 5],
        id: null,
      });
    });

    it('echoes a valid id when the rest of the envelope is invalid', async () => {
      expect(await call('{"jsonrpc":"1.0","method":"get_data","id":7}')).toMatchObject({
        error: { code: -32600 },
        id: 7,
      });
    });

    it('rejects params that are neither an object nor an array', async () => {
      for (const params of ['bar', 3, null]) {
        expect(await call(JSON.stringify({ jsonrpc: '2.0', method: 'get_data', params, id: 1 }))).toEqual({
          jsonrpc: '2.0',
          error: { code: -32600, message: 'Invalid Request: params must be an object or an array' },
          id: 1,
        });
      }
    });

    it('answers params nested deeper than maxParamsDepth, or holding __proto__, with -32602 naming the path', async () => {
      const dispatcher = serving(
        [rpcMethod('probe.any', z.object({ meta: z.unknown() }).passthrough(), () => 'ran')],
        { maxParamsDepth: 4 },
      );
      const send = (params: string) =>
        call(`{"jsonrpc":"2.0","method":"probe.any","params":${params},"id":1}`, dispatcher);
      // params is level 1, so four levels end at b.
      expect(await send('{"meta":{"a":{"b":{"c":1}}}}')).toMatchObject({ result: 'ran' });
      expect(await send('{"meta":{"a":{"b":{"c":{}}}}}')).toEqual({
        jsonrpc: '2.0',
        error: {
          code: ErrorCodes.InvalidParams,
          message: 'Invalid params: params.meta.a.b.c: nested deeper than 4 levels',
          data: {
            issues: [
              { path: ['meta', 'a', 'b', 'c'], code: 'too_deep', message: 'nested deeper than 4 levels' },
            ],
          },
        },
        id: 1,
      });
      // 100,000 levels: still a validation error, not a stack overflow.
      const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
      expect(await send(`{"meta":${deep}}`)).toMatchObject({ error: { code: ErrorCodes.InvalidParams } });
      expect(await send('{"meta":[{"__proto__":{"polluted":true}}]}')).toMatchObject({
        error: {
          code: ErrorCodes.InvalidParams,
          message: 'Invalid params: params.meta[0].__proto__: the key __proto__ is not allowed',
        },
      });
    });

    it('parses a params-less call only until its schema is known to take {} unchanged', async () => {
      let parses = 0;
      const counted = z
        .object({})
        .strict()
        .superRefine(() => {
          parses++;
        });
      const dispatcher = serving([
        rpcMethod('probe.bare', counted, (params) => params),
        rpcMethod('probe.needs', z.object({ id: z.string() }), (params) => params),
      ]);
      for (let id = 1; id <= 3; id++) {
        expect(await call(`{"jsonrpc":"2.0","method":"probe.bare","id":${id}}`, dispatcher)).toEqual({
          jsonrpc: '2.0',
          result: {},
          id,
        });
      }
      expect(parses).toBe(1);
      // Params that were sent are always validated.
      await call('{"jsonrpc":"2.0","method":"probe.bare","params":{},"id":4}', dispatcher);
      expect(parses).toBe(2);
      expect(await call('{"jsonrpc":"2.0","method":"probe.needs","id":5}', dispatcher)).toMatchObject({
        error: { code: ErrorCodes.InvalidParams },
        id: 5,
      });
    });

    it('defaults absent params to an empty object', async () => {
      const dispatcher = serving([
        rpcMethod('probe.params', z.object({ limit: z.number().default(10) }), (params) => params),
      ]);
      expect(await call('{"jsonrpc":"2.0","method":"probe.params","id":1}', dispatcher)).toEqual({
        jsonrpc: '2.0',
        result: { limit: 10 },
        id: 1,
      });
    });

    it('answers a handler that returns undefined with a null result', async () => {
      expect(await call('{"jsonrpc":"2.0","method":"update","params":[1],"id":1}')).toEqual({
        jsonrpc: '2.0',
        result: null,
        id: 1,
      });
    });
  });
});

describe('createDispatcher', () => {
  describe('limits', () => {
    it('rejects a message longer than maxMessageBytes before parsing it', async () => {
      const dispatcher = setup({ maxMessageBytes: 100 });
      const hugeInvalidJson = '{'.repeat(101);
      expect(await call(hugeInvalidJson, dispatcher)).toEqual({
        jsonrpc: '2.0',
        error: {
          code: -32600,
          message: 'Message too large: received 101 characters, maximum is 100',
          data: { received: 101, maximum: 100 },
        },
        id: null,
      });
    });

    it('accepts a message of exactly maxMessageBytes characters', async () => {
      const text = '{"jsonrpc":"2.0","method":"get_data","id":1}';
      expect(await call(text, setup({ maxMessageBytes: text.length }))).toMatchObject({
        result: ['hello', 5],
      });
    });

    it('answers a batch longer than maxBatchSize with one -32600 and runs none of it', async () => {
      let calls = 0;
      const dispatcher = serving([rpcMethod('count', z.object({}), () => ++calls)], { maxBatchSize: 2 });
      const batch = [1, 2, 3].map((id) => ({ jsonrpc: '2.0', method: 'count', id }));
      expect(await call(JSON.stringify(batch), dispatcher)).toEqual({
        jsonrpc: '2.0',
        error: {
          code: -32600,
          message: 'Batch too large: 3 requests, maximum is 2',
          data: { received: 3, maximum: 2 },
        },
        id: null,
      });
      expect(calls).toBe(0);
      expect(await call(JSON.stringify(batch.slice(0, 2)), dispatcher)).toHaveLength(2);
    });
  });

  describe('params validation', () => {
    it('answers invalid params with -32602 naming the field and carrying the zod issues', async () => {
      const answer = (await call('{"jsonrpc":"2.0","method":"chat.echo","params":{"message":5},"id":1}')) as {
        error: { code: number; message: string; data: { issues: Array<Record<string, unknown>> } };
      };
      expect(answer.error.code).toBe(ErrorCodes.InvalidParams);
      expect(answer.error.message).toMatch(/^Invalid params: message: .*expected string/);
      expect(answer.error.data.issues).toEqual([
        { path: ['message'], code: 'invalid_type', message: expect.stringContaining('expected string') },
      ]);
    });

    it('names every failing field in the message', async () => {
      const answer = (await call('{"jsonrpc":"2.0","method":"chat.echo","params":{"repeat":0},"id":1}')) as {
        error: { message: string; data: { issues: unknown[] } };
      };
      expect(answer.error.message).toContain('message: ');
      expect(answer.error.message).toContain('repeat: ');
      expect(answer.error.data.issues).toHaveLength(2);
    });

    it('names each unrecognized key of a strict schema in the message and the issue path', async () => {
      const strict = z.strictObject({ name: z.string(), options: z.strictObject({ depth: z.number() }) });
      const answer = (await call(
        '{"jsonrpc":"2.0","method":"strict.set","params":{"name":"a","x":1,"y":2,"options":{"depth":1,"deep":true}},"id":1}',
        serving([rpcMethod('strict.set', strict, () => true)]),
      )) as { error: { code: number; message: string; data: { issues: unknown[] } } };
      expect(answer.error.code).toBe(ErrorCodes.InvalidParams);
      expect(answer.error.message).toBe(
        'Invalid params: options.deep: unrecognized key; x: unrecognized key; y: unrecognized key',
      );
      expect(answer.error.data.issues).toEqual([
        { path: ['options', 'deep'], code: 'unrecognized_keys', message: 'unrecognized key' },
        { path: ['x'], code: 'unrecognized_keys', message: 'unrecognized key' },
        { path: ['y'], code: 'unrecognized_keys', message: 'unrecognized key' },
      ]);
    });

    it('rejects positional params for a method whose schema is by-name', async () => {
      expect(await call('{"jsonrpc":"2.0","method":"chat.echo","params":["hi"],"id":1}')).toMatchObject({
        error: { code: -32602, message: expect.stringMatching(/^Invalid params: params: .*expected object/) },
        id: 1,
      });
    });
  });
});

describe('createDispatcher', () => {
  describe('errors', () => {
    it('answers a call without the required scope with -32603 naming the scope', async () => {
      expect(await call('{"jsonrpc":"2.0","method":"admin.secret","id":1}')).toEqual({
        jsonrpc: '2.0',
        error: { code: -32603, message: "Insufficient scope: requires 'admin'" },
        id: 1,
      });
      const answer = await setup().handle(
        '{"jsonrpc":"2.0","method":"admin.secret","id":1}',
        connection(adminIdentity),
      );
      expect(JSON.parse(answer!)).toEqual({ jsonrpc: '2.0', result: 'classified', id: 1 });
    });

    it('checks the scope before the params so callers learn nothing about schemas they cannot call', async () => {
      expect(await call('{"jsonrpc":"2.0","method":"admin.secret","params":[1],"id":1}')).toMatchObject({
        error: { code: -32603 },
      });
    });

    it('uses the injected authorize callback', async () => {
      const seen: string[] = [];
      const dispatcher = setup({
        authorize: (identity, scope) => {
          seen.push(`${identity.tokenId}:${scope}`);
          return false;
        },
      });
      expect(await call('{"jsonrpc":"2.0","method":"get_data","id":1}', dispatcher)).toMatchObject({
        error: { code: -32603, message: "Insufficient scope: requires 'rpc'" },
      });
      expect(seen).toEqual(['tok-rpc:rpc']);
    });

    it('hides the message of a thrown non-RpcError behind -32603 Internal error and logs it', async () => {
      const logger = recordingLogger();
      const text = await setup({ logger }).handle(
        '{"jsonrpc":"2.0","method":"fail.internal","id":1}',
        connection(),
      );
      expect(JSON.parse(text!)).toEqual({
        jsonrpc: '2.0',
        error: { code: -32603, message: 'Internal error' },
        id: 1,
      });
      expect(text).not.toContain('hunter2');
      expect(text).not.toContain('secret.db');
      const line = logger.entries.find((entry) => entry.level === 'error');
      if (line === undefined) throw new Error('expected an error log line');
      expect(line.fields).toMatchObject({ errorKind: 'internal', method: 'fail.internal', requestId: '1' });
      expect(typeof line.fields.hint).toBe('string');
      expect((line.fields.err as Error).message).toContain('hunter2');
    });

    it('answers -32603 and logs when the authorize callback throws', async () => {
      const logger = recordingLogger();
      const dispatcher = setup({
        logger,
        authorize: () => {
          throw new Error('scope store offline');
        },
      });
      const text = await dispatcher.handle('{"jsonrpc":"2.0","method":"get_data","id":1}', connection());
      expect(JSON.parse(text!)).toEqual({
        jsonrpc: '2.0',
        error: { code: -32603, message: 'Internal error' },
        id: 1,
      });
      expect(logger.entries.filter((line) => line.level === 'error')).toHaveLength(1);
    });

    it('passes a thrown RpcError through unchanged', async () => {
      expect(await call('{"jsonrpc":"2.0","method":"fail.notFound","params":{"id":"a:b"},"id":1}')).toEqual({
        jsonrpc: '2.0',
        error: { code: -32004, message: 'Session not found: a:b', data: { kind: 'session', id: 'a:b' } },
        id: 1,
      });
    });

    it('turns a result JSON cannot represent into -32603 for that id only', async () => {
      const dispatcher = serving([
        rpcMethod('big', z.object({}), () => 10n),
        rpcMethod('fine', z.object({}), () => 1),
      ]);
      const text = JSON.stringify([
        { jsonrpc: '2.0', method: 'big', id: 1 },
        { jsonrpc: '2.0', method: 'fine', id: 2 },
      ]);
      expect(await call(text, dispatcher)).toEqual([
        { jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: 1 },
        { jsonrpc: '2.0', result: 1, id: 2 },
      ]);
    });
  });

  describe('handler context', () => {
    it('gives each request a fresh trace id and the connection details', async () => {
      const first = (await call('{"jsonrpc":"2.0","method":"context.show","id":"r1"}')) as {
        result: unknown;
      };
      expect(first.result).toEqual({
        clientId: 'client-a',
        tokenId: 'tok-rpc',
        connectionId: 'conn-1',
        traceId: 'id-1',
        transport: 'memory',
        requestId: 'r1',
      });
    });

    it('runs handlers through the wrap callback', async () => {
      const wrapped: string[] = [];
      const dispatcher = setup({
        wrap: async (context, run) => {
          wrapped.push(context.traceId);
          const result = await run();
          return { wrapped: result };
        },
      });
      expect(await call('{"jsonrpc":"2.0","method":"get_data","id":1}', dispatcher)).toMatchObject({
        result: { wrapped: ['hello', 5] },
      });
      expect(wrapped).toEqual(['id-1']);
    });

    it('exposes the connection signal to handlers', async () => {
      const controller = new AbortController();
      controller.abort();
      const answer = await setup().handle('{"jsonrpc":"2.0","method":"slow.wait","params":{"ms":0},"id":1}', {
        ...connection(),
        signal: controller.signal,
      });
      expect(JSON.parse(answer!)).toMatchObject({ result: { aborted: true } });
    });
  });

  describe('options', () => {
    it('rejects invalid options with INVALID_OPTIONS', () => {
      expect(() => createDispatcher({ registry: {} as MethodRegistry })).toThrow(RpcCoreError);
      expect(() => createDispatcher({ registry: new MethodRegistry(), maxBatchSize: 0 })).toThrow(
        /maxBatchSize/,
      );
    });
  });
});

describe('Dispatcher.process', () => {
  function syncAndAsyncRegistry() {
    const registry = new MethodRegistry();
    registry.register(
      defineMethod({
        name: 'sync.echo',
        scope: 'rpc',
        params: z.object({ v: z.number() }),
        handler: ({ v }) => v,
      }),
      defineMethod({
        name: 'async.echo',
        scope: 'rpc',
        params: z.object({ v: z.number() }),
        handler: async ({ v }) => v,
      }),
      defineMethod({
        name: 'refined.echo',
        scope: 'rpc',
        params: z.object({ v: z.number() }).refine(async ({ v }) => v > 0, { message: 'v must be positive' }),
        handler: ({ v }) => v,
      }),
    );
    return registry;
  }

  it('answers synchronously when the scope check, schema and handler are synchronous', () => {
    const dispatcher = createDispatcher({ registry: syncAndAsyncRegistry() });
    const answer = dispatcher.process(
      '{"jsonrpc":"2.0","method":"sync.echo","params":{"v":3},"id":1}',
      connection(),
    );
    expect(typeof answer).toBe('string');
    expect(JSON.parse(answer as string)).toEqual({ jsonrpc: '2.0', result: 3, id: 1 });
    const invalid = dispatcher.process(
      '{"jsonrpc":"2.0","method":"sync.echo","params":{"v":"x"},"id":2}',
      connection(),
    );
    expect(JSON.parse(invalid as string)).toMatchObject({ error: { code: ErrorCodes.InvalidParams }, id: 2 });
  });

  it('answers with a promise for async handlers, async authorize and async refinements', async () => {
    const dispatcher = createDispatcher({ registry: syncAndAsyncRegistry() });
    const asyncHandler = dispatcher.process(
      '{"jsonrpc":"2.0","method":"async.echo","params":{"v":4},"id":1}',
      connection(),
    );
    expect(asyncHandler).toBeInstanceOf(Promise);
    expect(JSON.parse((await asyncHandler) as string)).toEqual({ jsonrpc: '2.0', result: 4, id: 1 });

    const refined = await dispatcher.process(
      '{"jsonrpc":"2.0","method":"refined.echo","params":{"v":-1},"id":2}',
      connection(),
    );
    expect(JSON.parse(refined as string)).toMatchObject({
      error: { code: ErrorCodes.InvalidParams, message: expect.stringContaining('v must be positive') },
    });

    const gated = createDispatcher({ registry: syncAndAsyncRegistry(), authorize: async () => false });
    const denied = await gated.process(
      '{"jsonrpc":"2.0","method":"sync.echo","params":{"v":1},"id":3}',
      connection(),
    );
    expect(JSON.parse(denied as string)).toMatchObject({
      error: { code: ErrorCodes.InternalError, message: "Insufficient scope: requires 'rpc'" },
    });
  });

  it('answers a batch synchronously only when every member was synchronous', async () => {
    const dispatcher = createDispatcher({ registry: syncAndAsyncRegistry() });
    const sync = dispatcher.process(
      '[{"jsonrpc":"2.0","method":"sync.echo","params":{"v":1},"id":1},{"jsonrpc":"2.0","method":"sync.echo","params":{"v":2},"id":2}]',
      connection(),
    );
    expect(typeof sync).toBe('string');
    const mixed = dispatcher.process(
      '[{"jsonrpc":"2.0","method":"async.echo","params":{"v":1},"id":1},{"jsonrpc":"2.0","method":"sync.echo","params":{"v":2},"id":2}]',
      connection(),
    );
    expect(mixed).toBeInstanceOf(Promise);
    expect(JSON.parse((await mixed) as string)).toEqual([
      { jsonrpc: '2.0', result: 1, id: 1 },
      { jsonrpc: '2.0', result: 2, id: 2 },
    ]);
  });
});

describe('Dispatcher.invoke', () => {
  const stream = defineMethod({
    name: 'chat.stream',
    scope: 'admin',
    params: z.object({ message: z.string().min(1) }).strict(),
    handler: (params, context) => {
      if (params.message === 'boom') throw new Error('secret detail');
      return { echoed: params.message, method: context.method, transport: context.transport };
    },
  });

  it('runs an unregistered method through the scope check, params schema and wrap of dispatched calls', async () => {
    const wrapped: string[] = [];
    const dispatcher = setup({
      wrap: (context, run) => {
        wrapped.push(context.method);
        return run();
      },
    });
    expect(dispatcher.registry.get('chat.stream')).toBeUndefined();
    await expect(dispatcher.invoke(stream, { message: 'hi' }, connection(adminIdentity))).resolves.toEqual({
      echoed: 'hi',
      method: 'chat.stream',
      transport: 'memory',
    });
    expect(wrapped).toEqual(['chat.stream']);
    await expect(dispatcher.invoke(stream, { message: 'hi' }, connection())).rejects.toMatchObject({
      code: ErrorCodes.InternalError,
      message: "Insufficient scope: requires 'admin'",
    });
    await expect(dispatcher.invoke(stream, { message: '' }, connection(adminIdentity))).rejects.toMatchObject(
      {
        code: ErrorCodes.InvalidParams,
        data: { issues: [expect.objectContaining({ path: ['message'] })] },
      },
    );
  });

  it('rejects a thrown non-RpcError as -32603 without its message, and logs it', async () => {
    const logger = recordingLogger();
    const dispatcher = setup({ logger });
    const failure = await dispatcher
      .invoke(stream, { message: 'boom' }, connection(adminIdentity))
      .catch((e) => e);
    expect(failure).toMatchObject({ code: ErrorCodes.InternalError, message: 'Internal error' });
    expect(logger.entries).toContainEqual(
      expect.objectContaining({ level: 'error', message: 'rpc handler failed' }),
    );
  });
});

describe('DispatcherOptions.observe', () => {
  it('is told of each answered call: the method, 0 or the error code, and the seconds it took', async () => {
    const seen: Array<[string, number, number]> = [];
    const slow = rpcMethod('test.slow', z.object({}), async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      return 'done';
    });
    const picky = rpcMethod('test.picky', z.object({ n: z.number() }), ({ n }) => n);
    const broken = rpcMethod('test.broken', z.object({}), () => {
      throw new Error('boom');
    });
    const dispatcher = serving([slow, picky, broken], { observe: (...call) => seen.push(call) });
    const send = (method: string, params: unknown) =>
      dispatcher.handle(JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }), connection(adminIdentity));
    await send('test.slow', {});
    await send('test.picky', { n: 'x' });
    await send('test.broken', {});
    await send('test.unknown', {});
    expect(seen.map(([method, code]) => [method, code])).toEqual([
      ['test.slow', 0],
      ['test.picky', -32602],
      ['test.broken', -32603],
    ]);
    expect(seen[0]?.[2]).toBeGreaterThanOrEqual(0.015);
  });
});
