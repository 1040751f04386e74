import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';

/** Thrown by a test handler to answer with a JSON-RPC error. */
export class WireFailure extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

export interface HandlerContext {
  /** The socket the request came on (undefined over HTTP). */
  socket: WebSocket | undefined;
}

export type Handler = (params: unknown, context: HandlerContext) => unknown;

export interface TestServerOptions {
  /** Token the server accepts; requests with any other token are refused. */
  token: string;
  handlers: Record<string, Handler>;
  /** Port to bind; 0 picks a free one. */
  port?: number;
  /** Answer batches in reverse order, to prove the client matches answers by id. */
  reverseBatches?: boolean;
}

export interface UpgradeRecord {
  url: string;
  authorization: string | undefined;
}

/**
 * A small JSON-RPC 2.0 server over WebSocket (`/ws`) and HTTP (`POST /rpc`),
 * written for the client tests: it follows the agentd transport rules that
 * matter to a client (4001 on a bad token, batches answered in order,
 * notifications unanswered, 1001 on shutdown) and nothing else.
 */
export class TestServer {
  readonly received: unknown[] = [];
  readonly sockets = new Set<WebSocket>();
  readonly upgrades: UpgradeRecord[] = [];
  private readonly http: Server;
  private readonly wss: WebSocketServer;

  private constructor(private readonly options: TestServerOptions) {
    this.http = createServer((request, response) => {
      if (request.method !== 'POST' || request.url !== '/rpc') {
        response.writeHead(404).end();
        return;
      }
      if (!this.authorised(request)) {
        response
          .writeHead(401, { 'content-type': 'application/json' })
          .end(
            JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Unauthorized' } }),
          );
        return;
      }
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        void this.answer(Buffer.concat(chunks).toString('utf8'), undefined).then((reply) => {
          if (reply === undefined) response.writeHead(204).end();
          else response.writeHead(200, { 'content-type': 'application/json' }).end(reply);
        });
      });
    });
    this.wss = new WebSocketServer({ noServer: true });
    this.http.on('upgrade', (request, socket, head) => {
      if (!request.url?.startsWith('/ws')) {
        socket.destroy();
        return;
      }
      this.upgrades.push({ url: request.url, authorization: request.headers.authorization });
      this.wss.handleUpgrade(request, socket, head, (ws) => {
        // Like agentd: the upgrade is accepted either way and a bad token gets close 4001 at once.
        if (!this.authorised(request)) {
          ws.close(4001, 'Unauthorized');
          return;
        }
        this.sockets.add(ws);
        ws.on('close', () => this.sockets.delete(ws));
        ws.on('message', (data, isBinary) => {
          if (isBinary) {
            ws.send(
              JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }),
            );
            return;
          }
          void this.answer(data.toString(), ws).then((reply) => {
            if (reply !== undefined && ws.readyState === ws.OPEN) ws.send(reply);
          });
        });
      });
    });
  }

  static async start(options: TestServerOptions): Promise<TestServer> {
    const server = new TestServer(options);
    await new Promise<void>((resolve, reject) => {
      server.http.once('error', reject);
      server.http.listen(options.port ?? 0, '127.0.0.1', () => resolve());
    });
    return server;
  }

  get port(): number {
    return (this.http.address() as AddressInfo).port;
  }

  get wsUrl(): string {
    return `ws://127.0.0.1:${this.port}/ws`;
  }

  get httpUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Sends a notification to every connected client. */
  broadcast(method: string, params: unknown): void {
    const frame = JSON.stringify({ jsonrpc: '2.0', method, params });
    for (const socket of this.sockets) socket.send(frame);
  }

  /** Sends a raw text frame to every connected client. */
  sendRaw(frame: string): void {
    for (const socket of this.sockets) socket.send(frame);
  }

  /** Closes every client with `code` and stops listening. */
  async stop(code = 1001, reason = 'Server shutting down'): Promise<void> {
    for (const socket of this.sockets) socket.close(code, reason);
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
    this.http.closeAllConnections();
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }

  private authorised(request: IncomingMessage): boolean {
    const header = request.headers.authorization;
    if (header === `Bearer ${this.options.token}`) return true;
    const query = new URL(request.url ?? '/', 'http://localhost').searchParams.get('token');
    return query === this.options.token;
  }

  private async answer(text: string, socket: WebSocket | undefined): Promise<string | undefined> {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
    }
    this.received.push(parsed);
    if (Array.isArray(parsed)) {
      const replies = await Promise.all(parsed.map((item) => this.answerOne(item, socket)));
      const present = replies.filter((reply) => reply !== undefined);
      if (this.options.reverseBatches) present.reverse();
      return present.length === 0 ? undefined : JSON.stringify(present);
    }
    const reply = await this.answerOne(parsed, socket);
    return reply === undefined ? undefined : JSON.stringify(reply);
  }

  private async answerOne(request: unknown, socket: WebSocket | undefined): Promise<unknown> {
    const { id, method, params } = request as { id?: string | number; method: string; params?: unknown };
    const handler = this.options.handlers[method];
    let reply: unknown;
    if (!handler) {
      reply = {
        jsonrpc: '2.0',
        id: id ?? null,
        error: { code: -32601, message: `Method not found: ${method}` },
      };
    } else {
      try {
        const result = await handler(params ?? {}, { socket });
        reply = { jsonrpc: '2.0', id: id ?? null, result: result ?? null };
      } catch (error) {
        const failure =
          error instanceof WireFailure ? error : new WireFailure(-32603, 'Internal error', undefined);
        const wire: Record<string, unknown> = { code: failure.code, message: failure.message };
        if (failure.data !== undefined) wire.data = failure.data;
        reply = { jsonrpc: '2.0', id: id ?? null, error: wire };
      }
    }
    return id === undefined ? undefined : reply;
  }
}

/** Awaits a promise that must reject and returns what it rejected with; a fulfilled promise fails the test. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}
