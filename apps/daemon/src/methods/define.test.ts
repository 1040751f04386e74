import { type MethodContext, RpcError } from '@agentd/rpc-core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { methodsOf } from './define.js';

// The handlers under test never read their context.
const context = {} as MethodContext;
const toWire = (error: unknown) => new RpcError(-32001, `wire: ${(error as Error).message}`);

describe('methodsOf', () => {
  it('keeps a synchronous handler synchronous, so the dispatcher answers it without a promise', () => {
    const { rpcMethod } = methodsOf('x', toWire);
    const method = rpcMethod('sync', {
      params: z.object({}),
      handler: () => 42,
    });
    expect(method.name).toBe('x.sync');
    expect(method.scope).toBe('rpc');
    expect(method.handler({}, context)).toBe(42);
  });

  it('translates a synchronous throw and an asynchronous rejection through toWire', async () => {
    const { adminMethod } = methodsOf('x', toWire);
    const throwing = adminMethod('throws', {
      params: z.object({}),
      handler: () => {
        throw new Error('boom');
      },
    });
    const rejecting = adminMethod('rejects', {
      params: z.object({}),
      handler: async () => {
        throw new Error('later');
      },
    });
    expect(throwing.scope).toBe('admin');
    expect(() => throwing.handler({}, context)).toThrow('wire: boom');
    await expect(rejecting.handler({}, context)).rejects.toThrow('wire: later');
  });

  it('passes errors through unchanged when the namespace has no translation', async () => {
    const { rpcMethod } = methodsOf('x');
    const failure = new Error('as is');
    const method = rpcMethod('plain', {
      params: z.object({}),
      handler: async () => {
        throw failure;
      },
    });
    await expect(method.handler({}, context)).rejects.toBe(failure);
  });
});
