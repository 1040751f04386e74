import { z } from 'zod';
import type { DispatchConnection, Dispatcher } from './dispatcher.js';
import { createNotification, type JsonRpcNotification, type JsonRpcResponse } from './envelope.js';
import { RpcCoreError, RpcError } from './errors.js';
import { defaultRandomId, fn, parseOptions } from './internal/options.js';
import type { Identity } from './method.js';

/** Options of {@link createMemoryPair}. */
export interface MemoryPairOptions {
  /** The dispatcher the client end talks to. */
  dispatcher: Dispatcher;
  /** Identity the server end treats the client as. */
  identity: Identity;
  /**
   * Connection id handlers see.
   * @default randomId()
   */
  connectionId?: string | undefined;
  /**
   * Time limit of `client.request`; `0` disables it.
   * @default 30000
   */
  timeoutMs?: number | undefined;
  /**
   * Source of the default connection id.
   * @default crypto.randomUUID
   */
  randomId?: (() => string) | undefined;
}

/** Events a {@link MemoryClient} emits. */
export interface MemoryClientEvents {
  /** A notification pushed by the server end. */
  notification: (notification: JsonRpcNotification) => void;
  /** The pair was closed. */
  close: () => void;
}

/** The client end: speaks JSON-RPC text to the dispatcher, with no socket in between. */
export interface MemoryClient {
  /**
   * Calls a method and resolves to its result.
   * @throws {RpcError} the error the server answered with
   * @throws {RpcCoreError} `TIMEOUT` after `timeoutMs`, `TRANSPORT_CLOSED` when the pair is closed
   */
  request(method: string, params?: unknown): Promise<unknown>;
  /** Sends a notification; resolves once the handler has finished. */
  notify(method: string, params?: unknown): Promise<void>;
  /** Sends raw text exactly as given and resolves to the raw answer (`undefined` when there is none). */
  send(raw: string): Promise<string | undefined>;
  /** Subscribes to an event. */
  on<E extends keyof MemoryClientEvents>(event: E, listener: MemoryClientEvents[E]): void;
  /** Unsubscribes from an event. */
  off<E extends keyof MemoryClientEvents>(event: E, listener: MemoryClientEvents[E]): void;
  /** Closes the pair (same as `server.close()`). */
  close(): void;
  /** Whether the pair is closed. */
  readonly closed: boolean;
}

/** The server end: what a transport would hold for this connection. */
export interface MemoryServerEnd {
  /** The identity the client is treated as. */
  readonly identity: Identity;
  /** The connection id handlers see. */
  readonly connectionId: string;
  /** Pushes a notification to the client; returns `false` once the pair is closed. */
  notify(method: string, params?: unknown): boolean;
  /** Closes the pair; in-flight handlers see their signal aborted. */
  close(): void;
}

/** Both ends of an in-memory connection. */
export interface MemoryPair {
  client: MemoryClient;
  server: MemoryServerEnd;
}

const optionsSchema = z.object({
  dispatcher: z.custom<Dispatcher>(
    (value) => typeof (value as { handle?: unknown } | null)?.handle === 'function',
    { message: 'dispatcher must come from createDispatcher' },
  ),
  identity: z.object({ tokenId: z.string(), clientId: z.string(), scopes: z.array(z.string()).readonly() }),
  connectionId: z.string().min(1).optional(),
  timeoutMs: z.number().int().nonnegative().default(30_000),
  randomId: fn<() => string>('randomId').optional(),
});

/**
 * Creates a linked client and server end over a dispatcher, for tests and in-process callers. Every message is
 * serialised to text and back, so the client sees exactly what a socket client would.
 *
 * @throws {RpcCoreError} `INVALID_OPTIONS` when the options fail validation.
 */
export function createMemoryPair(options: MemoryPairOptions): MemoryPair {
  const parsed = parseOptions(optionsSchema, options, 'createMemoryPair');
  const { dispatcher, timeoutMs } = parsed;
  const identity = options.identity;
  const connectionId = parsed.connectionId ?? (parsed.randomId ?? defaultRandomId)();
  const controller = new AbortController();
  const connection: DispatchConnection = {
    identity,
    connectionId,
    transport: 'memory',
    signal: controller.signal,
  };
  const notificationListeners = new Set<MemoryClientEvents['notification']>();
  const closeListeners = new Set<MemoryClientEvents['close']>();
  let nextId = 1;
  let closed = false;

  function closedError(): RpcCoreError {
    return new RpcCoreError('TRANSPORT_CLOSED', 'Memory connection closed');
  }

  function close(): void {
    if (closed) return;
    closed = true;
    controller.abort(closedError());
    for (const listener of [...closeListeners]) listener();
  }

  async function send(raw: string): Promise<string | undefined> {
    if (closed) throw closedError();
    return dispatcher.handle(raw, connection);
  }

  function request(method: string, params?: unknown): Promise<unknown> {
    const id = nextId++;
    const text = JSON.stringify(
      params === undefined ? { jsonrpc: '2.0', method, id } : { jsonrpc: '2.0', method, params, id },
    );
    return new Promise((resolve, reject) => {
      if (closed) {
        reject(closedError());
        return;
      }
      let timer: NodeJS.Timeout | undefined;
      const onClose = (): void => {
        clearTimeout(timer);
        reject(closedError());
      };
      closeListeners.add(onClose);
      if (timeoutMs > 0) {
        timer = setTimeout(() => {
          closeListeners.delete(onClose);
          reject(
            new RpcCoreError('TIMEOUT', `No answer to ${method} within ${timeoutMs} ms`, {
              data: { method },
            }),
          );
        }, timeoutMs);
      }
      dispatcher.handle(text, connection).then((answer) => {
        clearTimeout(timer);
        closeListeners.delete(onClose);
        if (answer === undefined) {
          reject(new RpcCoreError('TRANSPORT_CLOSED', `No answer to ${method}`));
          return;
        }
        const response = JSON.parse(answer) as JsonRpcResponse;
        if ('error' in response) reject(RpcError.fromJSON(response.error));
        else resolve(response.result);
      }, reject);
    });
  }

  async function notify(method: string, params?: unknown): Promise<void> {
    await send(JSON.stringify(createNotification(method, params)));
  }

  const client: MemoryClient = {
    request,
    notify,
    send,
    on(event, listener) {
      if (event === 'notification') notificationListeners.add(listener as MemoryClientEvents['notification']);
      else closeListeners.add(listener as MemoryClientEvents['close']);
    },
    off(event, listener) {
      if (event === 'notification')
        notificationListeners.delete(listener as MemoryClientEvents['notification']);
      else closeListeners.delete(listener as MemoryClientEvents['close']);
    },
    close,
    get closed() {
      return closed;
    },
  };

  const server: MemoryServerEnd = {
    identity,
    connectionId,
    notify(method, params) {
      if (closed) return false;
      // Round-trip through text so listeners get what a socket client would, delivered asynchronously like one.
      const text = JSON.stringify(createNotification(method, params));
      queueMicrotask(() => {
        if (closed) return;
        const notification = JSON.parse(text) as JsonRpcNotification;
        for (const listener of [...notificationListeners]) listener(notification);
      });
      return true;
    },
    close,
  };

  return { client, server };
}
