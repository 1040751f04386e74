import { describe, expect, it } from 'vitest';
import { createDispatcher } from './dispatcher.js';
import { RpcCoreError, RpcError } from './errors.js';
import { exampleRegistry, hangingMethod, rpcIdentity } from './internal/test-support.js';
import { createMemoryPair } from './memory-pair.js';

function pair(timeoutMs?: number) {
  const registry = exampleRegistry();
  registry.register(hangingMethod());
  return createMemoryPair({
    dispatcher: createDispatcher({ registry }),
    identity: rpcIdentity,
    connectionId: 'mem-1',
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  });
}

describe('createMemoryPair', () => {
  it('resolves requests with results and handler context of the memory transport', async () => {
    const { client } = pair();
    expect(await client.request('subtract', { minuend: 5, subtrahend: 3 })).toBe(2);
    expect(await client.request('context.show')).toMatchObject({
      transport: 'memory',
      connectionId: 'mem-1',
      clientId: 'client-a',
    });
  });

  it('rejects with the RpcError the server answered', async () => {
    const { client } = pair();
    const error = await client.request('fail.notFound', { id: 'x' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RpcError);
    expect(error).toMatchObject({ code: -32004, message: 'Session not found: x' });
  });

  it('sends raw text and notifications exactly as given', async () => {
    const { client } = pair();
    expect(await client.send('[]')).toBe(
      '{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: empty batch"},"id":null}',
    );
    await expect(client.notify('update', [1])).resolves.toBeUndefined();
  });

  it('delivers server notifications to client listeners as events', async () => {
    const { client, server } = pair();
    const received: unknown[] = [];
    const listener = (notification: unknown) => received.push(notification);
    client.on('notification', listener);
    expect(server.notify('session.completed', { sessionKey: 'k', result: 'r' })).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 0));
    client.off('notification', listener);
    server.notify('ignored');
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(received).toEqual([
      { jsonrpc: '2.0', method: 'session.completed', params: { sessionKey: 'k', result: 'r' } },
    ]);
  });

  it('aborts in-flight handlers and rejects pending requests when closed', async () => {
    const { client, server } = pair();
    const pending = client.request('hang.forever');
    let closeEvents = 0;
    client.on('close', () => {
      closeEvents += 1;
    });
    server.close();
    await expect(pending).rejects.toMatchObject({ code: 'TRANSPORT_CLOSED' });
    await expect(client.request('get_data')).rejects.toBeInstanceOf(RpcCoreError);
    expect(client.closed).toBe(true);
    expect(closeEvents).toBe(1);
    expect(server.notify('x')).toBe(false);
  });

  it('rejects with TIMEOUT when no answer arrives in time', async () => {
    const { client } = pair(30);
    await expect(client.request('hang.forever')).rejects.toMatchObject({ code: 'TIMEOUT' });
    client.close();
  });
});
