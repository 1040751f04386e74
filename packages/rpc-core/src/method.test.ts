import { thrownBy } from '@agentd/test-support';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { RpcCoreError } from './errors.js';
import { defineMethod, MethodRegistry } from './method.js';

const ping = defineMethod({ name: 'system.ping', scope: 'rpc', params: z.object({}), handler: () => 'pong' });

describe('defineMethod', () => {
  it('returns the definition unchanged', () => {
    expect(ping.name).toBe('system.ping');
  });

  it('rejects a malformed name, scope or schema', () => {
    const handler = () => null;
    expect(() => defineMethod({ name: 'bad name', scope: 'rpc', params: z.object({}), handler })).toThrow(
      RpcCoreError,
    );
    expect(() =>
      defineMethod({ name: 'a.b', scope: 'root' as 'rpc', params: z.object({}), handler }),
    ).toThrow(/scope/);
    expect(() => defineMethod({ name: 'a.b', scope: 'rpc', params: {} as z.ZodObject, handler })).toThrow(
      /params/,
    );
  });
});

describe('MethodRegistry', () => {
  it('registers, finds and lists methods sorted by name', () => {
    const other = defineMethod({
      name: 'agent.execute',
      scope: 'rpc',
      params: z.object({}),
      handler: () => 1,
    });
    const registry = new MethodRegistry().register(ping, other);
    expect(registry.has('system.ping')).toBe(true);
    expect(registry.get('agent.execute')).toBe(other);
    expect(registry.get('nope')).toBeUndefined();
    expect(registry.names()).toEqual(['agent.execute', 'system.ping']);
    expect(registry.list()).toEqual([other, ping]);
    expect(registry.size).toBe(2);
  });

  it('throws DUPLICATE_METHOD on a second method of the same name and adds nothing from that call', () => {
    const registry = new MethodRegistry().register(ping);
    const fresh = defineMethod({ name: 'fresh.one', scope: 'rpc', params: z.object({}), handler: () => 1 });
    const caught = thrownBy(() => registry.register(fresh, ping));
    expect(caught).toBeInstanceOf(RpcCoreError);
    expect((caught as RpcCoreError).code).toBe('DUPLICATE_METHOD');
    expect(registry.has('fresh.one')).toBe(false);
  });
});
