import type { WebSocketTransport } from '@agentd/rpc-core';
import { describe, expect, it } from 'vitest';
import { createGatewayPool, type GatewayGeneration } from './gateway-pool.js';

/** A generation that records what reached it; `connections` stands in for open sockets. */
function fakeGeneration(name: string, log: string[]) {
  const state = { connections: 1, closed: false };
  const ws = {
    handleUpgrade: () => {
      log.push(`${name}:upgrade`);
    },
    notify: () => state.connections,
    broadcast: () => state.connections,
    notifyWhere: () => state.connections,
    closeWhere: () => 0,
    get connectionCount() {
      return state.connections;
    },
    close: async () => {
      state.closed = true;
    },
  } as unknown as WebSocketTransport;
  const generation: GatewayGeneration = {
    ws,
    http: async () => {
      log.push(`${name}:http`);
    },
  };
  return { generation, state };
}

describe('createGatewayPool', () => {
  it('routes new connections to the newest generation and keeps older ones until their sockets close', async () => {
    const log: string[] = [];
    const built = [fakeGeneration('a', log), fakeGeneration('b', log)];
    let index = 0;
    const pool = createGatewayPool(() => built[index++]!.generation);
    pool.renew();
    pool.ws.handleUpgrade({} as never, {} as never, Buffer.alloc(0));
    await pool.http({} as never, {} as never);
    expect(log).toEqual(['b:upgrade', 'b:http']);
    expect(pool.ws.broadcast('heartbeat')).toBe(2);
    expect(pool.ws.notifyWhere(() => true, 'approval.requested')).toBe(2);
    expect(built[0]!.state.closed).toBe(false);
    built[0]!.state.connections = 0;
    pool.ws.handleUpgrade({} as never, {} as never, Buffer.alloc(0));
    expect(built[0]!.state.closed).toBe(true);
    expect(pool.ws.connectionCount).toBe(1);
  });

  it('closes every older generation on replace', async () => {
    const log: string[] = [];
    const built = [fakeGeneration('a', log), fakeGeneration('b', log), fakeGeneration('c', log)];
    let index = 0;
    const pool = createGatewayPool(() => built[index++]!.generation);
    pool.renew();
    await pool.replace();
    expect(built.map((entry) => entry.state.closed)).toEqual([true, true, false]);
  });
});
