import { describe, expect, it } from 'vitest';
import { ErrorCodes, RpcCoreError, RpcError } from './errors.js';

describe('ErrorCodes', () => {
  it('holds the JSON-RPC and server-defined codes', () => {
    expect(ErrorCodes).toEqual({
      ParseError: -32700,
      InvalidRequest: -32600,
      MethodNotFound: -32601,
      InvalidParams: -32602,
      InternalError: -32603,
      RateLimited: -32000,
      Unauthorized: -32001,
      NotFound: -32004,
      InstanceAffinity: -32010,
    });
  });
});

describe('RpcError', () => {
  it('serialises to the wire shape and leaves data out when absent', () => {
    expect(JSON.parse(JSON.stringify(RpcError.methodNotFound('x.y')))).toEqual({
      code: -32601,
      message: 'Method not found: x.y',
    });
    expect(
      RpcError.invalidParams('Invalid params: a: bad', [
        { path: ['a'], code: 'custom', message: 'bad' },
      ]).toJSON(),
    ).toEqual({
      code: -32602,
      message: 'Invalid params: a: bad',
      data: { issues: [{ path: ['a'], code: 'custom', message: 'bad' }] },
    });
  });

  it('builds the documented messages', () => {
    expect(RpcError.notFound('agent', 'main').toJSON()).toEqual({
      code: -32004,
      message: 'Agent not found: main',
      data: { kind: 'agent', id: 'main' },
    });
    expect(RpcError.insufficientScope('admin').message).toBe("Insufficient scope: requires 'admin'");
    expect(RpcError.rateLimited().toJSON()).toEqual({ code: -32000, message: 'Message rate limit exceeded' });
    expect(RpcError.internal().toJSON()).toEqual({ code: -32603, message: 'Internal error' });
  });

  it('names the owning instance of a call that belongs elsewhere (-32010, the pinned data)', () => {
    const owner = { instanceId: 'a1', advertiseUrl: 'http://10.0.0.1:7777' };
    expect(RpcError.instanceAffinity('Browser tab ab12', owner).toJSON()).toEqual({
      code: -32010,
      message: 'Browser tab ab12 is held by instance a1; call http://10.0.0.1:7777',
      data: { code: 'INSTANCE_AFFINITY', instanceId: 'a1', advertiseUrl: 'http://10.0.0.1:7777' },
    });
  });

  it('never serialises its cause', () => {
    const error = RpcError.internal('Internal error', new Error('secret detail'));
    expect(JSON.stringify(error)).not.toContain('secret detail');
    expect(error.cause).toBeInstanceOf(Error);
  });

  it('round-trips through fromJSON', () => {
    const rebuilt = RpcError.fromJSON({ code: -32004, message: 'Run not found: r', data: { id: 'r' } });
    expect(rebuilt).toBeInstanceOf(RpcError);
    expect(rebuilt.toJSON()).toEqual({ code: -32004, message: 'Run not found: r', data: { id: 'r' } });
  });
});

describe('RpcCoreError', () => {
  it('carries a string code, data and cause and is distinct from RpcError', () => {
    const cause = new Error('socket hang up');
    const error = new RpcCoreError('TRANSPORT_CLOSED', 'closed', { cause, data: { connectionId: 'c' } });
    expect(error.code).toBe('TRANSPORT_CLOSED');
    expect(error.cause).toBe(cause);
    expect(error.data).toEqual({ connectionId: 'c' });
    expect(error).not.toBeInstanceOf(RpcError);
  });
});
