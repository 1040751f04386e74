import type { Duplex } from 'node:stream';
import { WebSocket } from 'ws';
import type { DispatchConnection } from '../dispatcher.js';
import { createNotification } from '../envelope.js';
import type { RpcLogger } from '../logger.js';
import type { Identity } from '../method.js';
import type { RateLimiter } from '../websocket-transport.js';
import type { SendQueue } from './send-queue.js';

/** One open, authenticated WebSocket connection. */
export interface Connection {
  socket: WebSocket;
  /** The TCP stream under `socket`, corked while one read's worth of messages is answered. */
  stream: Duplex;
  /** Whether `stream` is corked until the end of the current tick. */
  corked: boolean;
  /** The send callback, made once per connection rather than once per message. */
  onSent: (error?: Error) => void;
  /** Backpressure: pauses reading while too much is queued for this peer. */
  queue: SendQueue;
  identity: Identity;
  connectionId: string;
  controller: AbortController;
  openedAt: number;
  alive: boolean;
  limiter: RateLimiter | undefined;
  closed: Promise<void>;
  dispatchConnection: DispatchConnection;
}

/**
 * The open connections of a transport: sending to one, to a client's or to
 * all, closing by identity, and the heartbeat and ping timers that run while
 * any connection is open.
 */
export class Connections extends Set<Connection> {
  readonly #heartbeatMs: number;
  readonly #pingIntervalMs: number;
  readonly #logger: RpcLogger;
  readonly #now: () => number;
  #heartbeatTimer: NodeJS.Timeout | undefined;
  #pingTimer: NodeJS.Timeout | undefined;

  constructor(options: {
    heartbeatMs: number;
    pingIntervalMs: number;
    logger: RpcLogger;
    now: () => number;
  }) {
    super();
    this.#heartbeatMs = options.heartbeatMs;
    this.#pingIntervalMs = options.pingIntervalMs;
    this.#logger = options.logger;
    this.#now = options.now;
  }

  /** Sends a text frame when the socket is open; reports whether it was sent. */
  send(connection: Connection, text: string): boolean {
    if (connection.socket.readyState !== WebSocket.OPEN) return false;
    connection.socket.send(text, connection.onSent);
    connection.queue.check();
    return true;
  }

  /** The send callback of one connection: a failed write is logged at debug (the socket's error event says more). */
  sendCallback(connectionId: string): (error?: Error) => void {
    return (error) => {
      if (error) this.#logger.debug({ connectionId, err: error }, 'websocket send failed');
    };
  }

  /**
   * Holds the connection's writes until the end of the current tick, so the answers to messages
   * that arrived in one read leave in one write (one syscall) instead of one each.
   */
  corkForTick(connection: Connection): void {
    if (connection.corked) return;
    connection.corked = true;
    connection.stream.cork();
    process.nextTick(uncork, connection);
  }

  /** Sends a notification to every connection of `clientId`; returns how many got it. */
  notify(clientId: string, method: string, params?: unknown): number {
    const text = JSON.stringify(createNotification(method, params));
    return this.#sendToAll(text, (connection) => connection.identity.clientId === clientId);
  }

  /** Sends a notification to every connection; returns how many got it. */
  broadcast(method: string, params?: unknown): number {
    return this.#sendToAll(JSON.stringify(createNotification(method, params)), () => true);
  }

  /** Sends a notification to every connection whose identity matches; returns how many got it. */
  notifyWhere(predicate: (identity: Identity) => boolean, method: string, params?: unknown): number {
    const text = JSON.stringify(createNotification(method, params));
    return this.#sendToAll(text, (connection) => predicate(connection.identity));
  }

  /** Closes the open connections whose identity matches; returns how many. */
  closeWhere(predicate: (identity: Identity) => boolean, code = 4001, reason = 'Unauthorized'): number {
    let closed = 0;
    for (const connection of this) {
      if (connection.socket.readyState === WebSocket.OPEN && predicate(connection.identity)) {
        connection.socket.close(code, reason);
        closed += 1;
      }
    }
    return closed;
  }

  /** Starts the heartbeat and ping timers (when configured and not running). */
  startTimers(): void {
    if (this.#heartbeatMs > 0 && this.#heartbeatTimer === undefined) {
      this.#heartbeatTimer = setInterval(
        () => this.broadcast('heartbeat', { ts: this.#now() }),
        this.#heartbeatMs,
      );
      this.#heartbeatTimer.unref();
    }
    if (this.#pingIntervalMs > 0 && this.#pingTimer === undefined) {
      this.#pingTimer = setInterval(() => this.#checkPeers(), this.#pingIntervalMs);
      this.#pingTimer.unref();
    }
  }

  /** Stops the heartbeat and ping timers. */
  stopTimers(): void {
    clearInterval(this.#heartbeatTimer);
    clearInterval(this.#pingTimer);
    this.#heartbeatTimer = undefined;
    this.#pingTimer = undefined;
  }

  #sendToAll(text: string, predicate: (connection: Connection) => boolean): number {
    let sent = 0;
    for (const connection of this) {
      if (predicate(connection) && this.send(connection, text)) sent += 1;
    }
    return sent;
  }

  #checkPeers(): void {
    for (const connection of this) {
      if (!connection.alive) {
        this.#logger.warn(
          {
            connectionId: connection.connectionId,
            clientId: connection.identity.clientId,
            errorKind: 'network',
            hint: 'The peer did not answer the previous ping; its connection was terminated.',
          },
          'websocket peer unresponsive',
        );
        connection.socket.terminate();
        continue;
      }
      connection.alive = false;
      connection.socket.ping();
    }
  }
}

function uncork(connection: Connection): void {
  connection.corked = false;
  connection.stream.uncork();
}
