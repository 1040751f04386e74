import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDispatcher } from './dispatcher.js';
import { RpcCoreError } from './errors.js';
import { rpcIdentity } from './internal/test-support.js';
import { createMemoryPair } from './memory-pair.js';
import { defineMethod, MethodRegistry } from './method.js';
import { rpcDiscoverMethod, toOpenRpc } from './openrpc.js';

const TreeNode: z.ZodType<{ name: string; children: unknown[] }> = z.object({
  name: z.string(),
  get children() {
    return z.array(TreeNode);
  },
});

function registry() {
  return new MethodRegistry().register(
    defineMethod({
      name: 'agent.execute',
      scope: 'rpc',
      description: 'Runs one agent turn.',
      params: z.object({
        message: z.string().describe('The user message'),
        agentId: z.string().optional(),
        maxTurns: z.number().int().default(8),
      }),
      result: z.object({ response: z.string(), finishReason: z.enum(['stop', 'length']) }),
      handler: () => ({ response: 'ok', finishReason: 'stop' as const }),
    }),
    defineMethod({ name: 'config.read', scope: 'admin', params: z.object({}), handler: () => ({}) }),
    defineMethod({
      name: 'graph.define',
      scope: 'rpc',
      params: z.object({ root: TreeNode }),
      handler: () => null,
    }),
    defineMethod({
      name: 'math.subtract',
      scope: 'rpc',
      params: z.tuple([z.number(), z.number()]),
      handler: () => 0,
    }),
  );
}

describe('toOpenRpc', () => {
  it('builds an OpenRPC 1.3 document with by-name params, results and scopes', () => {
    const document = toOpenRpc(registry(), { title: 'agentd', version: '0.1.0' });
    expect(document.openrpc).toBe('1.3.2');
    expect(document.info).toEqual({ title: 'agentd', version: '0.1.0' });
    expect(document.methods.map((method) => method.name)).toEqual([
      'agent.execute',
      'config.read',
      'graph.define',
      'math.subtract',
    ]);
    const execute = document.methods[0]!;
    expect(execute).toMatchObject({
      name: 'agent.execute',
      description: 'Runs one agent turn.',
      paramStructure: 'by-name',
      'x-scope': 'rpc',
    });
    expect(execute.params).toEqual([
      {
        name: 'message',
        required: true,
        description: 'The user message',
        schema: { type: 'string', description: 'The user message' },
      },
      { name: 'agentId', required: false, schema: { type: 'string' } },
      { name: 'maxTurns', required: false, schema: expect.objectContaining({ type: 'integer', default: 8 }) },
    ]);
    expect(execute.result).toEqual({
      name: 'result',
      schema: expect.objectContaining({
        type: 'object',
        properties: {
          response: { type: 'string' },
          finishReason: { type: 'string', enum: ['stop', 'length'] },
        },
        required: ['response', 'finishReason'],
      }),
    });
    const config = document.methods[1]!;
    expect(config).toMatchObject({
      params: [],
      paramStructure: 'by-name',
      'x-scope': 'admin',
      result: { schema: {} },
    });
    expect(JSON.stringify(document)).not.toContain('$schema');
  });

  it('moves recursive definitions into components and rewrites their references', () => {
    const document = toOpenRpc(registry(), { title: 'agentd', version: '1' });
    const define = document.methods.find((method) => method.name === 'graph.define')!;
    const ref = (define.params[0]!.schema as { $ref: string }).$ref;
    expect(ref.startsWith('#/components/schemas/graph.define.params.')).toBe(true);
    const component = document.components.schemas[ref.slice('#/components/schemas/'.length)];
    expect(component).toMatchObject({ type: 'object', properties: { children: { items: { $ref: ref } } } });
  });

  it('describes a non-object params schema whole in x-params-schema', () => {
    const document = toOpenRpc(registry(), { title: 'agentd', version: '1' });
    const subtract = document.methods.find((method) => method.name === 'math.subtract')!;
    expect(subtract).toMatchObject({ params: [], paramStructure: 'either' });
    expect(subtract['x-params-schema']).toMatchObject({
      type: 'array',
      prefixItems: [{ type: 'number' }, { type: 'number' }],
    });
  });

  it('rejects info without a title or version', () => {
    expect(() => toOpenRpc(registry(), { title: '', version: '1' })).toThrow(RpcCoreError);
  });
});

describe('rpcDiscoverMethod', () => {
  it('serves the document, itself included, through rpc.discover with scope rpc', async () => {
    const methods = registry();
    methods.register(rpcDiscoverMethod(methods, { title: 'agentd', version: '0.1.0' }));
    const { client } = createMemoryPair({
      dispatcher: createDispatcher({ registry: methods }),
      identity: rpcIdentity,
    });
    const document = (await client.request('rpc.discover')) as ReturnType<typeof toOpenRpc>;
    expect(document.methods.map((method) => method.name)).toContain('rpc.discover');
    expect(document.methods.find((method) => method.name === 'rpc.discover')).toMatchObject({
      'x-scope': 'rpc',
    });
    methods.register(
      defineMethod({ name: 'late.added', scope: 'admin', params: z.object({}), handler: () => 1 }),
    );
    const again = (await client.request('rpc.discover')) as ReturnType<typeof toOpenRpc>;
    expect(again.methods.map((method) => method.name)).toContain('late.added');
  });
});
