import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocket } from 'ws';
import type { Identity } from '../method.js';
import type { WebSocketTransport } from '../websocket-transport.js';

/** Tokens known to the test servers and the identities they stand for. */
export const tokens: Record<string, Identity> = {
  'rpc-token': { tokenId: 'tok-rpc', clientId: 'client-a', scopes: ['rpc'] },
  'rpc-token-2': { tokenId: 'tok-rpc-2', clientId: 'client-a', scopes: ['rpc'] },
  'other-token': { tokenId: 'tok-other', clientId: 'client-b', scopes: ['rpc'] },
  'admin-token': { tokenId: 'tok-admin', clientId: 'client-admin', scopes: ['*'] },
};

/** Reads `Authorization: Bearer` first, then `?token=`, like the daemon does. */
export function authenticateFromTokens(request: IncomingMessage): Identity | null {
  const header = request.headers.authorization;
  const fromHeader = header?.startsWith('Bearer ') ? header.slice('Bearer '.length) : undefined;
  const fromQuery = new URL(request.url ?? '/', 'http://localhost').searchParams.get('token') ?? undefined;
  const token = fromHeader ?? fromQuery;
  return token === undefined ? null : (tokens[token] ?? null);
}

/** Starts a node:http server on port 0 that routes `/ws` upgrades to the transport. */
export async function listen(transport: WebSocketTransport): Promise<{ server: Server; url: string }> {
  const server = createServer((_request, response) => {
    response.statusCode = 404;
    response.end();
  });
  server.on('upgrade', (request, socket, head) => {
    if (new URL(request.url ?? '/', 'http://localhost').pathname === '/ws') {
      transport.handleUpgrade(request, socket, head);
    } else {
      socket.destroy();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `ws://127.0.0.1:${port}/ws` };
}

/** A real ws client that queues every received message for `next()`. */
export interface TestClient {
  socket: WebSocket;
  next(): Promise<unknown>;
  nextWhere(predicate: (message: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  call(message: unknown): Promise<unknown>;
  received: unknown[];
  closed: Promise<{ code: number; reason: string }>;
}

export async function connect(url: string, token?: string): Promise<TestClient> {
  const socket = new WebSocket(
    url,
    token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } },
  );
  const received: unknown[] = [];
  const waiters: Array<() => void> = [];
  let cursor = 0;
  socket.on('message', (data) => {
    received.push(JSON.parse(data.toString()));
    for (const wake of waiters.splice(0)) wake();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    socket.on('close', (code, reason) => {
      resolve({ code, reason: reason.toString() });
      for (const wake of waiters.splice(0)) wake();
    });
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  async function next(): Promise<unknown> {
    while (cursor >= received.length) {
      if (socket.readyState === WebSocket.CLOSED) throw new Error('socket closed before the next message');
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
    return received[cursor++];
  }
  async function nextWhere(predicate: (message: Record<string, unknown>) => boolean) {
    for (;;) {
      const message = (await next()) as Record<string, unknown>;
      if (predicate(message)) return message;
    }
  }
  async function call(message: unknown): Promise<unknown> {
    socket.send(typeof message === 'string' ? message : JSON.stringify(message));
    return nextWhere((entry) => entry.method !== 'heartbeat');
  }
  return { socket, next, nextWhere, call, received, closed };
}
