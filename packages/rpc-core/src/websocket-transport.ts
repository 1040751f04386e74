import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Injected } from '@agentd/contracts';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import { z } from 'zod';
import type { Dispatcher } from './dispatcher.js';
import { RpcCoreError, RpcError } from './errors.js';
import { oversizeFailure, settleWithin } from './internal/limits.js';
import { defaultRandomId, fn, loggerSchema, parseOptions } from './internal/options.js';
import { SendQueue } from './internal/send-queue.js';
import { failure } from './internal/wire.js';
import { type Connection, Connections } from './internal/ws-connections.js';
import { noopLogger, type RpcLogger } from './logger.js';
import type { Identity } from './method.js';

/** A per-connection message limiter; `tryAcquire` returns `false` when the message must be dropped. */
export interface RateLimiter {
  tryAcquire(): boolean;
}

/** Establishes who is connecting; `null` or `undefined` means unauthorised. */
export type Authenticate = (
  request: IncomingMessage,
) => Identity | null | undefined | Promise<Identity | null | undefined>;

/**
 * Options of {@link createWebSocketTransport}.
 * From {@link Injected}: `logger` gets connection lifecycle and failures, `now` times heartbeats
 * and durations, `randomId` makes connection ids.
 */
export interface WebSocketTransportOptions extends Injected<RpcLogger> {
  /** Handles every text message. */
  dispatcher: Dispatcher;
  /** Called once per upgrade request, before the upgrade completes. */
  authenticate: Authenticate;
  /**
   * Interval of `heartbeat` notifications to every connection; `0` disables them.
   * @default 30000
   */
  heartbeatMs?: number | undefined;
  /**
   * Interval of WebSocket pings; a peer that has not answered the previous ping is terminated. `0` disables.
   * @default 30000
   */
  pingIntervalMs?: number | undefined;
  /**
   * Creates one limiter per connection.
   * @default none (unlimited)
   */
  createRateLimiter?: (() => RateLimiter) | undefined;
  /**
   * Longest wait in `close()` for in-flight requests, and then for peers to acknowledge the close.
   * @default 5000
   */
  shutdownTimeoutMs?: number | undefined;
  /**
   * Longest text message, in characters; a longer one is answered with `-32600` before parsing.
   * @default dispatcher.maxMessageBytes
   */
  maxMessageBytes?: number | undefined;
  /**
   * Largest frame payload, in bytes, the socket buffers at all; beyond it `ws` closes the connection with 1009.
   * Four times `maxMessageBytes` so a message within the character limit is never cut off (UTF-8 needs at most
   * three bytes per character) and a moderately oversized one still gets the `-32600` answer.
   * @default 4 * maxMessageBytes
   */
  maxPayloadBytes?: number | undefined;
  /**
   * Bytes queued for sending to one connection past which it stops being read (its input is
   * paused until the queue drains); `0` turns the cap off. Bounds what a client that does not
   * read its answers can make the server hold.
   * @default 262144
   */
  maxBufferedBytes?: number | undefined;
  /**
   * How long a connection may stay over `maxBufferedBytes` before it is closed with 4009
   * (`Send queue full`) and logged.
   * @default 10000
   */
  slowClientTimeoutMs?: number | undefined;
}

/** A WebSocket JSON-RPC endpoint the daemon's HTTP server hands upgrades to. */
export interface WebSocketTransport {
  /** Completes (or refuses) an upgrade; call it from the HTTP server's `upgrade` event for `/ws`. */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Sends a notification to every connection of `clientId`; returns how many sockets it was sent to. */
  notify(clientId: string, method: string, params?: unknown): number;
  /** Sends a notification to every connection; returns how many sockets it was sent to. */
  broadcast(method: string, params?: unknown): number;
  /**
   * Sends a notification to every connection whose identity matches (for example only
   * admin-scoped callers); returns how many sockets it was sent to.
   */
  notifyWhere(predicate: (identity: Identity) => boolean, method: string, params?: unknown): number;
  /**
   * Closes every connection whose identity matches, for example after a token is revoked; returns how many.
   * @param code close code, default 4001
   * @param reason close reason, default `Unauthorized`
   */
  closeWhere(predicate: (identity: Identity) => boolean, code?: number, reason?: string): number;
  /** Number of open, authenticated connections. */
  readonly connectionCount: number;
  /**
   * Graceful shutdown: refuses new upgrades, waits for in-flight requests (bounded by `shutdownTimeoutMs`),
   * then closes every connection with 1001 `Server shutting down`. Idempotent.
   */
  close(): Promise<void>;
}

const optionsSchema = z.object({
  dispatcher: z.custom<Dispatcher>(
    (value) => typeof (value as { handle?: unknown } | null)?.handle === 'function',
    { message: 'dispatcher must come from createDispatcher' },
  ),
  authenticate: fn<Authenticate>('authenticate'),
  heartbeatMs: z.number().int().nonnegative().default(30_000),
  pingIntervalMs: z.number().int().nonnegative().default(30_000),
  createRateLimiter: fn<() => RateLimiter>('createRateLimiter').optional(),
  shutdownTimeoutMs: z.number().int().nonnegative().default(5_000),
  maxMessageBytes: z.number().int().positive().optional(),
  maxPayloadBytes: z.number().int().positive().optional(),
  maxBufferedBytes: z.number().int().nonnegative().default(262_144),
  slowClientTimeoutMs: z.number().int().positive().default(10_000),
  logger: loggerSchema.optional(),
  now: fn<() => number>('now').optional(),
  randomId: fn<() => string>('randomId').optional(),
});

const shutdownReason = 'Server shutting down';

/**
 * Creates the WebSocket transport: authentication at upgrade (failures close with 4001), per-connection rate
 * limiting, size checks before parsing, heartbeats, dead-peer detection, targeted and broadcast notifications
 * and graceful shutdown.
 *
 * @throws {RpcCoreError} `INVALID_OPTIONS` when the options fail validation.
 */
export function createWebSocketTransport(options: WebSocketTransportOptions): WebSocketTransport {
  const parsed = parseOptions(optionsSchema, options, 'createWebSocketTransport');
  const { dispatcher, authenticate, heartbeatMs, pingIntervalMs, createRateLimiter, shutdownTimeoutMs } =
    parsed;
  const { maxBufferedBytes, slowClientTimeoutMs } = parsed;
  const logger = parsed.logger ?? noopLogger;
  const now = parsed.now ?? Date.now;
  const randomId = parsed.randomId ?? defaultRandomId;
  const maxMessageBytes = parsed.maxMessageBytes ?? dispatcher.maxMessageBytes;
  const maxPayloadBytes = parsed.maxPayloadBytes ?? maxMessageBytes * 4;

  const server = new WebSocketServer({ noServer: true, clientTracking: false, maxPayload: maxPayloadBytes });
  const connections = new Connections({ heartbeatMs, pingIntervalMs, logger, now });
  const send = (connection: Connection, text: string): boolean => connections.send(connection, text);
  const pendingUpgrades = new Set<Promise<void>>();
  // A counter, not a set of promises: the hot path should allocate nothing per message.
  let inFlight = 0;
  let idleWaiters: Array<() => void> = [];
  const settled = (): void => {
    inFlight--;
    if (inFlight === 0 && idleWaiters.length > 0) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const wake of waiters) wake();
    }
  };
  const whenIdle = (): Promise<void> =>
    inFlight === 0 ? Promise.resolve() : new Promise((resolve) => idleWaiters.push(resolve));
  let closing = false;
  let closePromise: Promise<void> | undefined;

  const rateLimitedText = JSON.stringify(failure(null, RpcError.rateLimited().toJSON()));
  const binaryText = JSON.stringify(
    failure(null, RpcError.parseError('Parse error: binary frames are not accepted').toJSON()),
  );

  function onMessage(connection: Connection, data: RawData, isBinary: boolean): void {
    if (connection.queue.stalled) {
      // Already read from the socket before it was paused: answered once the queue drains
      // (a binary frame too, so its error answer keeps its place in line).
      connection.queue.hold(isBinary ? '' : toText(data), isBinary);
      return;
    }
    onText(connection, data, isBinary);
  }

  function onText(connection: Connection, data: RawData | string, isBinary: boolean): void {
    if (connection.limiter && !connection.limiter.tryAcquire()) {
      send(connection, rateLimitedText);
      return;
    }
    if (isBinary) {
      send(connection, binaryText);
      return;
    }
    const text = typeof data === 'string' ? data : toText(data);
    if (text.length > maxMessageBytes) {
      send(connection, JSON.stringify(oversizeFailure(text.length, maxMessageBytes)));
      return;
    }
    const answer = dispatcher.process(text, connection.dispatchConnection);
    if (typeof answer === 'string') {
      connections.corkForTick(connection);
      send(connection, answer);
      return;
    }
    if (answer === undefined) return;
    inFlight++;
    answer.then(
      (text) => {
        if (text !== undefined) send(connection, text);
        settled();
      },
      (error: unknown) => {
        logger.error(
          {
            connectionId: connection.connectionId,
            err: error,
            errorKind: 'internal',
            hint: 'The dispatcher rejected, which it should never do; the message got no answer.',
          },
          'websocket dispatch failed',
        );
        settled();
      },
    );
  }

  function accept(socket: WebSocket, stream: Duplex, identity: Identity): void {
    const controller = new AbortController();
    const connectionId = randomId();
    let markClosed = (): void => {};
    const queue = new SendQueue(
      socket,
      stream,
      connectionId,
      { maxBufferedBytes, slowClientTimeoutMs, logger },
      (text, isBinary) => onText(connection, text, isBinary),
    );
    const connection: Connection = {
      socket,
      stream,
      corked: false,
      onSent: connections.sendCallback(connectionId),
      queue,
      identity,
      connectionId,
      controller,
      openedAt: now(),
      alive: true,
      limiter: createRateLimiter?.(),
      closed: new Promise<void>((resolve) => {
        markClosed = resolve;
      }),
      dispatchConnection: { identity, connectionId, transport: 'ws', signal: controller.signal },
    };
    connections.add(connection);
    connections.startTimers();
    logger.info(
      { connectionId, clientId: identity.clientId, activeConnections: connections.size },
      'websocket connected',
    );
    socket.on('message', (data, isBinary) => onMessage(connection, data, isBinary));
    socket.on('pong', () => {
      connection.alive = true;
    });
    socket.on('error', (error) => {
      logger.warn(
        {
          connectionId,
          clientId: identity.clientId,
          err: error,
          errorKind: 'network',
          hint: 'The socket failed (protocol violation, oversized frame or reset); it is being closed.',
        },
        'websocket error',
      );
    });
    socket.on('close', (code, reason) => {
      connections.delete(connection);
      connection.queue.release();
      controller.abort(new RpcCoreError('TRANSPORT_CLOSED', 'WebSocket connection closed'));
      if (connections.size === 0) connections.stopTimers();
      logger.info(
        {
          connectionId,
          clientId: identity.clientId,
          closeCode: code,
          closeReason: reason.toString(),
          connectionDurationMs: now() - connection.openedAt,
          activeConnections: connections.size,
        },
        'websocket closed',
      );
      markClosed();
    });
  }

  async function upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    // Until ws takes the socket over, nothing else listens for its errors.
    const onEarlyError = (): void => {
      socket.destroy();
    };
    socket.on('error', onEarlyError);
    let identity: Identity | null | undefined;
    let authFailed = false;
    try {
      identity = await authenticate(request);
    } catch (error) {
      authFailed = true;
      logger.error(
        {
          err: error,
          errorKind: 'internal',
          hint: 'The authenticate callback threw; the connection was closed with 1011.',
        },
        'websocket authentication failed',
      );
    }
    socket.off('error', onEarlyError);
    if (socket.destroyed) return;
    server.handleUpgrade(request, socket, head, (ws) => {
      if (closing) {
        ws.close(1001, shutdownReason);
      } else if (authFailed) {
        ws.close(1011, 'Internal error');
      } else if (!identity) {
        logger.warn(
          {
            errorKind: 'auth',
            hint: 'The upgrade carried no valid bearer token; the connection was closed with 4001.',
          },
          'websocket unauthorized',
        );
        ws.close(4001, 'Unauthorized');
      } else {
        accept(ws, socket, identity);
      }
    });
  }

  function handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    if (closing) {
      socket.end(`HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      socket.destroy();
      return;
    }
    const task = upgrade(request, socket, head).finally(() => pendingUpgrades.delete(task));
    pendingUpgrades.add(task);
  }

  function close(): Promise<void> {
    closing = true;
    closePromise ??= shutdown({
      pendingUpgrades,
      inFlight: () => inFlight,
      whenIdle,
      connections,
      server,
      logger,
      now,
      timeoutMs: shutdownTimeoutMs,
    });
    return closePromise;
  }

  return {
    handleUpgrade,
    notify: (clientId, method, params) => connections.notify(clientId, method, params),
    broadcast: (method, params) => connections.broadcast(method, params),
    notifyWhere: (predicate, method, params) => connections.notifyWhere(predicate, method, params),
    closeWhere: (predicate, code, reason) => connections.closeWhere(predicate, code, reason),
    get connectionCount() {
      return connections.size;
    },
    close,
  };
}

/** What {@link shutdown} drains and closes. */
interface ShutdownState {
  pendingUpgrades: ReadonlySet<Promise<void>>;
  /** Requests still being answered. */
  inFlight: () => number;
  whenIdle: () => Promise<void>;
  connections: Connections;
  server: WebSocketServer;
  logger: RpcLogger;
  now: () => number;
  timeoutMs: number;
}

/**
 * Lets pending upgrades and in-flight requests finish (up to the timeout), then closes every
 * connection with 1001 (terminating those that do not acknowledge in time) and the server.
 */
async function shutdown(state: ShutdownState): Promise<void> {
  const { connections, logger, now, timeoutMs } = state;
  const started = now();
  const deadline = started + timeoutMs;
  await settleWithin(Promise.allSettled([...state.pendingUpgrades]), deadline - now());
  // Requests that arrive while draining are still served, so keep looking until the set stays empty.
  while (state.inFlight() > 0 && now() < deadline) {
    await settleWithin(state.whenIdle(), deadline - now());
  }
  if (state.inFlight() > 0) {
    logger.warn(
      {
        itemCount: state.inFlight(),
        errorKind: 'timeout',
        hint: 'Requests were still running when shutdownTimeoutMs elapsed; their connections are closed anyway.',
      },
      'websocket shutdown timed out',
    );
  }
  connections.stopTimers();
  const open = [...connections];
  for (const connection of open) connection.socket.close(1001, shutdownReason);
  const acknowledged = await settleWithin(
    Promise.all(open.map((connection) => connection.closed)),
    timeoutMs,
  );
  if (!acknowledged) {
    for (const connection of connections) connection.socket.terminate();
  }
  await new Promise<void>((resolve) => state.server.close(() => resolve()));
  logger.info(
    { shutdownDurationMs: now() - started, activeConnections: connections.size },
    'websocket closed all',
  );
}

function toText(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}
