import { ClientError, RpcCallError } from './errors.js';
import { backoffDelay } from '@agentd/async-control';
import { Emitter } from './internal/emitter.js';
import { buildRequest, checkRequest, classify, type JsonRpcId, serialise } from './internal/json-rpc.js';
import { redactUrl } from './internal/options.js';
import { decodeFrame, describeProblem } from './internal/ws-receive.js';
import { readSettings, type Settings } from './internal/ws-settings.js';
import type { ClientLogger } from './logger.js';
import type {
  AgentdNotifications,
  BatchEntry,
  BatchResults,
  CallArguments,
  CallOptions,
  MethodName,
  MethodParams,
  MethodResult,
} from './methods.js';

/**
 * The part of a WebSocket the client uses. Both `ws` and the WHATWG
 * `WebSocket` (browsers, Node 22+) fit it; only `ws` can send headers, so with
 * the others use `tokenLocation: 'query'`.
 */
export interface WebSocketLike {
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: 'open', listener: () => void): void;
  addEventListener(type: 'message', listener: (event: { data: unknown }) => void): void;
  addEventListener(type: 'close', listener: (event: { code: number; reason: string }) => void): void;
  addEventListener(type: 'error', listener: (event: { error?: unknown; message?: string }) => void): void;
}

/** A WebSocket constructor: `ws`'s by default, or any class with the same call shape. */
export type WebSocketConstructor = new (
  url: string,
  protocols?: string | string[],
  options?: { headers?: Record<string, string> },
) => WebSocketLike;

/** Reconnect policy of {@link createWsClient}. */
export interface ReconnectOptions {
  /**
   * Reconnect after an abnormal close (1006 and friends) or a server shutdown (1001).
   * @default true
   */
  enabled?: boolean;
  /**
   * Backoff ceiling of the first attempt; it doubles per attempt.
   * @default 250
   */
  initialDelayMs?: number;
  /**
   * Largest backoff ceiling.
   * @default 10000
   */
  maxDelayMs?: number;
  /**
   * Attempts before giving up; counted from the last successful connection.
   * @default Infinity
   */
  maxAttempts?: number;
}

/** Options of {@link createWsClient}. */
export interface WsClientOptions {
  /** WebSocket endpoint, for example `ws://127.0.0.1:7420/ws`. */
  url: string | URL;
  /** Bearer token from `gateway.tokens[]` or `tokens.create`. */
  token?: string;
  /**
   * Where the token goes: the `Authorization: Bearer` header, or the `token`
   * query parameter (for WebSocket implementations that cannot set headers).
   * @default 'header'
   */
  tokenLocation?: 'header' | 'query';
  /**
   * Default time a call may take, including any wait for a reconnection.
   * @default 30000
   */
  requestTimeoutMs?: number;
  /**
   * Time one connection attempt (upgrade plus probe) may take.
   * @default 10000
   */
  connectTimeoutMs?: number;
  /**
   * Method called once per connection before it counts as open. The server
   * checks the token at upgrade time and closes with 4001 right after
   * accepting it, so the first answer on a connection proves the token was
   * accepted; any answer counts, even an error. `null` treats the connection
   * as open as soon as the upgrade completes.
   * @default 'system.ping'
   */
  probeMethod?: string | null;
  /**
   * Reconnect policy, or `false` to never reconnect.
   * @default { enabled: true, initialDelayMs: 250, maxDelayMs: 10000, maxAttempts: Infinity }
   */
  reconnect?: ReconnectOptions | boolean;
  /**
   * Extra headers for the upgrade request (only `ws` sends them).
   * @default {}
   */
  headers?: Record<string, string>;
  /**
   * WebSocket constructor to use.
   * @default the `ws` package's WebSocket
   */
  WebSocket?: WebSocketConstructor;
  /**
   * Logger for connection life-cycle and dropped frames.
   * @default a silent logger
   */
  logger?: ClientLogger;
  /**
   * Random source for the reconnect jitter, in [0, 1).
   * @default Math.random
   */
  random?: () => number;
}

/** Connection state of a {@link WsClient}. */
export type WsClientState = 'idle' | 'connecting' | 'open' | 'reconnecting' | 'closed';

/** Payload of the `close` event. */
export interface CloseInfo {
  /** WebSocket close code, for example 1001 when the server shuts down. */
  code: number;
  reason: string;
  /** Whether the client is about to reconnect. */
  willReconnect: boolean;
}

/** Payload of the `reconnecting` event. */
export interface ReconnectInfo {
  /** 1 for the first attempt after a disconnect. */
  attempt: number;
  /** Wait before this attempt. */
  delayMs: number;
}

/** Life-cycle events of a {@link WsClient}. */
export interface WsClientEvents {
  /** A connection became usable (first connect and every reconnect). */
  open: () => void;
  /** An open connection closed. */
  close: (info: CloseInfo) => void;
  /** A reconnect attempt is scheduled. */
  reconnecting: (info: ReconnectInfo) => void;
  /** Something went wrong outside any call: unparseable frame, unattributable error answer, auth loss, giving up. */
  error: (error: ClientError | RpcCallError) => void;
  /** Every notification the server sends, known or not. */
  notification: (method: string, params: unknown) => void;
}

/** A JSON-RPC 2.0 client over one WebSocket that reconnects by itself. */
export interface WsClient {
  /** Current connection state. */
  readonly state: WsClientState;
  /**
   * Opens the connection. Resolves once it is usable; rejects with
   * `UNAUTHORIZED` when the server closes with 4001 (never retried) and with
   * `CONNECT_FAILED` when the first attempt fails (reconnecting applies only
   * to connections that were open once). While a reconnect is under way it
   * waits for that instead.
   */
  connect(): Promise<void>;
  /**
   * Calls a method and resolves with its result.
   * @throws {RpcCallError} when the server answers with a JSON-RPC error.
   * @throws {ClientError} `TIMEOUT`, `CLOSED`, `ABORTED`, `NOT_CONNECTED`, `INVALID_ARGUMENT`.
   */
  call<M extends MethodName>(method: M, ...args: CallArguments<M, CallOptions>): Promise<MethodResult<M>>;
  /** Sends a notification (no `id`, no answer). Resolves once the frame is written. */
  notify<M extends MethodName>(method: M, params?: MethodParams<M>, options?: CallOptions): Promise<void>;
  /**
   * Sends several requests in one frame. Resolves with one entry per request,
   * in order: the result, the `RpcCallError` for that entry, or `undefined`
   * for notifications. Timeout, abort and disconnect fail the whole batch.
   */
  batch<const T extends readonly BatchEntry[]>(entries: T, options?: CallOptions): Promise<BatchResults<T>>;
  /** Closes with code 1000 and stops reconnecting; pending calls fail with `CLOSED`. */
  close(): Promise<void>;
  /** Subscribes to a life-cycle event; returns the unsubscribe function. */
  on<E extends keyof WsClientEvents>(event: E, listener: WsClientEvents[E]): () => void;
  /** Subscribes to one notification method, for example `heartbeat`; returns the unsubscribe function. */
  on<M extends keyof AgentdNotifications>(
    event: M,
    listener: (params: AgentdNotifications[M]) => void,
  ): () => void;
  /** Subscribes to any other notification method; returns the unsubscribe function. */
  on(event: string, listener: (params: unknown) => void): () => void;
}

const LIFECYCLE_EVENTS = new Set(['open', 'close', 'reconnecting', 'error', 'notification']);

/*
 * Close codes after which an open connection is re-established: the server
 * going away or restarting, and the connection breaking. Others (1000, 1002,
 * 1003, 1007-1010, application codes) say the server meant it or the client is
 * at fault, so retrying would only repeat the outcome.
 */
const RETRYABLE_CLOSE_CODES = new Set([1001, 1005, 1006, 1011, 1012, 1013, 1014]);
const UNAUTHORIZED_CLOSE_CODE = 4001;

type Outcome = { ok: true; value: unknown } | { ok: false; error: RpcCallError };

interface InFlight {
  settle(outcome: Outcome): void;
  fail(error: Error): void;
}

interface Waiter {
  ready(socket: WebSocketLike): void;
  fail(error: Error): void;
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'object' && error !== null && 'message' in error) return String(error.message);
  return String(error);
}

/** Arms a timer unless the duration is infinite (setTimeout would fire at once for Infinity). */
function startTimer(ms: number, onExpire: () => void): ReturnType<typeof setTimeout> | undefined {
  return Number.isFinite(ms) ? setTimeout(onExpire, ms) : undefined;
}

class WsConnection implements WsClient {
  private readonly settings: Settings;
  private readonly logger: ClientLogger;
  private readonly emitter: Emitter;
  private current: WsClientState = 'idle';
  private socket: WebSocketLike | undefined;
  private attempt = 0;
  private reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  private connectTimer: ReturnType<typeof setTimeout> | undefined;
  private nextId = 1;
  private readonly inFlight = new Map<JsonRpcId, InFlight>();
  private readonly waiters = new Set<Waiter>();
  /** Why calls fail fast while idle; set when a connection is lost for good. */
  private idleReason: ClientError | undefined;

  constructor(options: WsClientOptions) {
    this.settings = readSettings(options);
    this.logger = this.settings.logger;
    this.emitter = new Emitter((event, error) => {
      this.logger.error(
        {
          event,
          err: error,
          errorKind: 'internal',
          hint: 'a listener registered with on() threw; fix the listener (the other listeners still ran)',
        },
        'ws client listener threw',
      );
    });
  }

  get state(): WsClientState {
    return this.current;
  }

  connect(): Promise<void> {
    if (this.current === 'open') return Promise.resolve();
    const ready = new Promise<void>((resolve, reject) => {
      this.waiters.add({ ready: () => resolve(), fail: reject });
    });
    if (this.current === 'idle' || this.current === 'closed') {
      this.current = 'connecting';
      this.idleReason = undefined;
      this.attempt = 0;
      this.openSocket();
    }
    return ready;
  }

  call<M extends MethodName>(method: M, ...args: CallArguments<M, CallOptions>): Promise<MethodResult<M>> {
    const [params, options] = args as [unknown, CallOptions | undefined];
    return this.dispatch([{ method, params }], false, options).then((outcomes) => {
      const outcome = outcomes[0]!;
      if (!outcome.ok) throw outcome.error;
      return outcome.value as MethodResult<M>;
    });
  }

  notify<M extends MethodName>(method: M, params?: MethodParams<M>, options?: CallOptions): Promise<void> {
    return this.dispatch([{ method, params, notification: true }], false, options).then(() => undefined);
  }

  batch<const T extends readonly BatchEntry[]>(entries: T, options?: CallOptions): Promise<BatchResults<T>> {
    if (!Array.isArray(entries)) {
      return Promise.reject(new ClientError('INVALID_ARGUMENT', 'batch expects an array of entries'));
    }
    // An empty array is an invalid request in JSON-RPC 2.0; there is nothing to ask the server.
    if (entries.length === 0) return Promise.resolve([] as unknown as BatchResults<T>);
    return this.dispatch(entries, true, options).then(
      (outcomes) =>
        outcomes.map((outcome) =>
          outcome === undefined ? undefined : outcome.ok ? outcome.value : outcome.error,
        ) as unknown as BatchResults<T>,
    );
  }

  async close(): Promise<void> {
    if (this.current === 'closed') return;
    this.current = 'closed';
    this.clearTimers();
    const error = new ClientError('CLOSED', 'the client was closed');
    this.failWaiters(error);
    this.failInFlight(error);
    const socket = this.socket;
    if (!socket) return;
    await new Promise<void>((resolve) => {
      socket.addEventListener('close', () => resolve());
      try {
        socket.close(1000, 'client closed');
      } catch (closeError) {
        // A socket that cannot be closed normally is torn down instead; there is nothing left to wait for.
        this.logger.debug({ err: closeError }, 'ws client close failed, detaching socket');
        this.detach(socket);
        this.emitter.emit('close', { code: 1006, reason: '', willReconnect: false });
        resolve();
      }
    });
  }

  on(event: string, listener: (...args: never[]) => void): () => void {
    return this.emitter.on(event, listener);
  }

  // Sending

  private dispatch(
    entries: readonly BatchEntry[],
    asArray: boolean,
    options: CallOptions | undefined,
  ): Promise<Array<Outcome | undefined>> {
    try {
      for (const entry of entries) checkRequest(entry?.method, entry?.params);
    } catch (error) {
      return Promise.reject(error);
    }
    const timeoutMs = options?.timeoutMs ?? this.settings.requestTimeoutMs;
    const signal = options?.signal;
    const label = asArray ? `batch of ${entries.length}` : entries[0]!.method;
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(
          new ClientError('ABORTED', `${label} was aborted before it was sent`, { cause: signal.reason }),
        );
        return;
      }
      const outcomes: Array<Outcome | undefined> = new Array(entries.length).fill(undefined);
      const ids: JsonRpcId[] = [];
      let remaining = entries.filter((entry) => !entry.notification).length;
      let settled = false;
      let removeWaiter: (() => void) | undefined;

      const finish = (error?: Error): void => {
        if (settled) return;
        settled = true;
        if (timer !== undefined) clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        removeWaiter?.();
        for (const id of ids) this.inFlight.delete(id);
        if (error) reject(error);
        else resolve(outcomes);
      };
      const timer = startTimer(timeoutMs, () =>
        finish(
          new ClientError('TIMEOUT', `${label} got no answer within ${timeoutMs} ms`, {
            data: { timeoutMs },
          }),
        ),
      );
      const onAbort = (): void => {
        finish(
          new ClientError('ABORTED', `${label} was aborted; the server may still execute it`, {
            cause: signal?.reason,
          }),
        );
      };
      signal?.addEventListener('abort', onAbort, { once: true });

      const transmit = (socket: WebSocketLike): void => {
        removeWaiter = undefined;
        if (settled) return;
        const messages = entries.map((entry, index) => {
          if (entry.notification) return buildRequest(entry.method, entry.params, undefined);
          const id = this.nextId++;
          ids.push(id);
          this.inFlight.set(id, {
            settle: (outcome) => {
              outcomes[index] = outcome;
              remaining -= 1;
              if (remaining === 0) finish();
            },
            fail: finish,
          });
          return buildRequest(entry.method, entry.params, id);
        });
        try {
          socket.send(serialise(asArray ? messages : messages[0]));
        } catch (error) {
          finish(
            error instanceof ClientError
              ? error
              : new ClientError('CLOSED', `${label} could not be written to the socket`, { cause: error }),
          );
          return;
        }
        if (remaining === 0) finish();
      };
      removeWaiter = this.whenReady(transmit, finish);
    });
  }

  /** Runs `ready` now if a connection is usable, later if one is coming, or fails at once. */
  private whenReady(
    ready: (socket: WebSocketLike) => void,
    fail: (error: Error) => void,
  ): (() => void) | undefined {
    switch (this.current) {
      case 'open':
        ready(this.socket!);
        return undefined;
      case 'connecting':
      case 'reconnecting': {
        const waiter: Waiter = { ready, fail };
        this.waiters.add(waiter);
        return () => this.waiters.delete(waiter);
      }
      case 'closed':
        fail(new ClientError('CLOSED', 'the client was closed'));
        return undefined;
      default:
        fail(
          this.idleReason ??
            new ClientError('NOT_CONNECTED', 'not connected: call connect() before sending requests'),
        );
        return undefined;
    }
  }

  // Connection life-cycle

  private openSocket(): void {
    const { url, headers, WebSocket: Socket } = this.settings;
    let socket: WebSocketLike;
    try {
      socket = new Socket(url.toString(), undefined, { headers });
    } catch (error) {
      this.socket = undefined;
      this.attemptFailed(0, describe(error), error);
      return;
    }
    this.socket = socket;
    let lastError: unknown;
    this.connectTimer = setTimeout(() => {
      if (this.socket !== socket) return;
      this.logger.debug({ url: redactUrl(url) }, 'ws client connect attempt timed out');
      this.detach(socket);
      this.attemptFailed(
        1006,
        'connect timed out',
        new Error(`no usable connection within ${this.settings.connectTimeoutMs} ms`),
      );
    }, this.settings.connectTimeoutMs);

    socket.addEventListener('open', () => {
      if (this.socket !== socket) return;
      const probe = this.settings.probeMethod;
      if (probe === null) {
        this.markReady(socket);
        return;
      }
      const id = this.nextId++;
      // Errors from the probe are ignored: the close handler decides what a lost connection means.
      this.inFlight.set(id, {
        settle: () => {
          this.inFlight.delete(id);
          if (this.socket === socket) this.markReady(socket);
        },
        fail: () => this.inFlight.delete(id),
      });
      try {
        socket.send(serialise(buildRequest(probe, undefined, id)));
      } catch (error) {
        lastError = error;
      }
    });
    socket.addEventListener('message', (event) => {
      if (this.socket === socket) this.handleFrame(event.data);
    });
    socket.addEventListener('error', (event) => {
      lastError = event.error ?? new Error(event.message ?? 'WebSocket error');
    });
    socket.addEventListener('close', (event) => {
      if (this.socket !== socket) return;
      this.handleClose(event.code, event.reason, lastError);
    });
  }

  private markReady(socket: WebSocketLike): void {
    if (this.current !== 'connecting' && this.current !== 'reconnecting') return;
    if (this.connectTimer !== undefined) clearTimeout(this.connectTimer);
    this.connectTimer = undefined;
    const reconnected = this.current === 'reconnecting';
    this.current = 'open';
    this.attempt = 0;
    this.logger.info({ url: redactUrl(this.settings.url), reconnected }, 'ws client connected');
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const waiter of waiters) waiter.ready(socket);
    this.emitter.emit('open');
  }

  /** Stops listening to a socket and tears it down without a close handshake. */
  private detach(socket: WebSocketLike): void {
    if (this.socket === socket) this.socket = undefined;
    const terminate = (socket as { terminate?: () => void }).terminate;
    try {
      if (typeof terminate === 'function') terminate.call(socket);
      else socket.close();
    } catch (error) {
      this.logger.debug({ err: error }, 'ws client could not tear down a socket');
    }
  }

  private handleClose(code: number, reason: string, lastError: unknown): void {
    this.socket = undefined;
    if (this.connectTimer !== undefined) clearTimeout(this.connectTimer);
    this.connectTimer = undefined;
    const phase = this.current;
    const wasOpen = phase === 'open';
    // The request left this process, but whether the server ran it before the connection broke
    // cannot be known, so the caller must decide whether repeating it is safe.
    this.failInFlight(
      new ClientError(
        'CLOSED',
        `connection closed (code ${code}) before an answer arrived; the server may or may not have executed the request`,
        { data: { code, reason } },
      ),
    );

    if (phase === 'closed') {
      this.emitter.emit('close', { code, reason, willReconnect: false });
      return;
    }

    if (code === UNAUTHORIZED_CLOSE_CODE) {
      const error = new ClientError(
        'UNAUTHORIZED',
        `the server rejected the token (close 4001${reason ? `: ${reason}` : ''})`,
        {
          data: { code, reason },
        },
      );
      this.goIdle(error);
      this.logger.warn(
        {
          url: redactUrl(this.settings.url),
          code,
          errorKind: 'auth',
          hint: 'the token is missing, revoked or lacks scope; pass a token listed in gateway.tokens and connect again',
        },
        'ws client unauthorized',
      );
      if (wasOpen) this.emitter.emit('close', { code, reason, willReconnect: false });
      // A first connect reports this through its rejected promise; later losses have no caller to tell.
      if (phase !== 'connecting') this.emitter.emit('error', error);
      return;
    }

    if (wasOpen) {
      const willReconnect = this.settings.reconnect.enabled && RETRYABLE_CLOSE_CODES.has(code);
      this.logger.info({ code, reason, willReconnect }, 'ws client disconnected');
      if (willReconnect) {
        this.current = 'reconnecting';
        this.attempt = 0;
      } else {
        this.goIdle(
          new ClientError(
            'NOT_CONNECTED',
            `connection closed (code ${code}) and will not be re-established`,
            {
              data: { code, reason },
            },
          ),
        );
      }
      this.emitter.emit('close', { code, reason, willReconnect });
      if (willReconnect) this.scheduleReconnect();
      return;
    }

    this.attemptFailed(code, reason || describe(lastError), lastError);
  }

  /** A connection attempt ended before the connection became usable. */
  private attemptFailed(code: number, reason: string, cause: unknown): void {
    if (this.current === 'connecting') {
      this.goIdle(
        new ClientError('CONNECT_FAILED', `could not connect to ${redactUrl(this.settings.url)}: ${reason}`, {
          cause,
          data: { code },
        }),
        true,
      );
      return;
    }
    if (this.current === 'reconnecting') {
      this.logger.debug({ attempt: this.attempt, code, reason }, 'ws client reconnect attempt failed');
      this.scheduleReconnect();
    }
  }

  private scheduleReconnect(): void {
    const { maxAttempts, initialDelayMs, maxDelayMs } = this.settings.reconnect;
    if (this.attempt >= maxAttempts) {
      const error = new ClientError('CONNECT_FAILED', `gave up reconnecting after ${this.attempt} attempts`, {
        data: { attempts: this.attempt },
      });
      this.logger.warn(
        {
          attempts: this.attempt,
          url: redactUrl(this.settings.url),
          errorKind: 'network',
          hint: 'check that the agentd daemon is running and reachable at the url, then call connect() again',
        },
        'ws client gave up reconnecting',
      );
      this.goIdle(error);
      this.emitter.emit('error', error);
      return;
    }
    this.attempt += 1;
    const delayMs = backoffDelay(this.attempt, {
      initialMs: initialDelayMs,
      maxMs: maxDelayMs,
      random: this.settings.random,
    });
    this.emitter.emit('reconnecting', { attempt: this.attempt, delayMs });
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      if (this.current === 'reconnecting') this.openSocket();
    }, delayMs);
  }

  /** No connection and none coming: waiting calls fail with `error`, later ones fail fast. */
  private goIdle(error: ClientError, transient = false): void {
    this.current = 'idle';
    this.clearTimers();
    // After a failed first attempt the next call should say "call connect()", not repeat that failure.
    this.idleReason = transient ? undefined : error;
    this.failWaiters(error);
  }

  private clearTimers(): void {
    if (this.reconnectTimer !== undefined) clearTimeout(this.reconnectTimer);
    if (this.connectTimer !== undefined) clearTimeout(this.connectTimer);
    this.reconnectTimer = undefined;
    this.connectTimer = undefined;
  }

  private failWaiters(error: Error): void {
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const waiter of waiters) waiter.fail(error);
  }

  private failInFlight(error: Error): void {
    const entries = [...this.inFlight.values()];
    this.inFlight.clear();
    for (const entry of entries) entry.fail(error);
  }

  // Receiving

  private handleFrame(data: unknown): void {
    const decoded = decodeFrame(data);
    if (decoded instanceof ClientError) {
      this.reportError(decoded);
      return;
    }
    for (const item of decoded) this.handleMessage(item);
  }

  private handleMessage(value: unknown): void {
    const message = classify(value);
    switch (message.kind) {
      case 'result':
      case 'error': {
        if (message.kind === 'error' && message.id === null) {
          // Rate-limit, size and parse errors come back with id null: they cannot be matched to a
          // call, so they are reported here and the affected call ends by its own timeout.
          this.reportError(new RpcCallError(message.error));
          return;
        }
        const id = message.id as JsonRpcId;
        const entry = this.inFlight.get(id);
        if (!entry) {
          this.logger.debug({ id }, 'ws client dropped an answer nobody waits for');
          return;
        }
        this.inFlight.delete(id);
        entry.settle(
          message.kind === 'result'
            ? { ok: true, value: message.result }
            : { ok: false, error: new RpcCallError(message.error) },
        );
        return;
      }
      case 'notification':
        this.emitter.emit('notification', message.method, message.params);
        if (!LIFECYCLE_EVENTS.has(message.method)) this.emitter.emit(message.method, message.params);
        return;
      case 'request':
        this.logger.warn(
          {
            method: message.method,
            errorKind: 'validation',
            hint: 'the server sent a request this client cannot answer; check that client and daemon versions match',
          },
          'ws client ignored a request from the server',
        );
        return;
      default:
        this.reportError(
          new ClientError('BAD_RESPONSE', 'received a message that is not JSON-RPC 2.0', { data: value }),
        );
    }
  }

  private reportError(error: ClientError | RpcCallError): void {
    this.logger.warn({ err: error, ...describeProblem(error) }, 'ws client error');
    this.emitter.emit('error', error);
  }
}

/**
 * Creates a JSON-RPC client over WebSocket for agentd's `/ws` endpoint.
 *
 * Nothing is sent until {@link WsClient.connect} is called. After an abnormal
 * close or a server shutdown (1001) the client reconnects with exponential
 * backoff and jitter; calls made meanwhile wait for the new connection within
 * their timeout, while calls that were in flight fail with `CLOSED` because the
 * server may or may not have executed them.
 *
 * @throws {ClientError} `INVALID_OPTIONS` when the options cannot be used.
 */
export function createWsClient(options: WsClientOptions): WsClient {
  return new WsConnection(options);
}
