import type { Injected } from '@agentd/contracts';
import { inspectValue, pathText } from '@agentd/input-guards';
import { z } from 'zod';
import type { JsonRpcId, JsonRpcResponse } from './envelope.js';
import { ErrorCodes, type ParamIssue, RpcError } from './errors.js';
import { oversizeFailure } from './internal/limits.js';
import { defaultRandomId, fn, loggerSchema, parseOptions } from './internal/options.js';
import { failure, isPlainObject, isValidId, success } from './internal/wire.js';
import { noopLogger, type RpcLogger } from './logger.js';
import {
  type AnyMethod,
  type Identity,
  type MethodContext,
  MethodRegistry,
  type MethodScope,
  type TransportKind,
} from './method.js';

/** What a transport tells the dispatcher about the connection a message came from. */
export interface DispatchConnection {
  /** The authenticated caller. */
  identity: Identity;
  /** Id of the connection, for logs and handler context. */
  connectionId: string;
  /** Transport the message arrived on. */
  transport: TransportKind;
  /** Aborted when the connection closes; handlers see it as `context.signal`. */
  signal?: AbortSignal | undefined;
}

/** Decides whether an identity may call a method of the given scope. */
export type Authorize = (identity: Identity, requiredScope: MethodScope) => boolean | Promise<boolean>;

/**
 * Runs a handler inside caller-provided context (for example an AsyncLocalStorage trace scope).
 * Must call `run` once and return what it returned (a value or a promise).
 */
export type WrapHandler = (context: MethodContext, run: () => unknown) => unknown;

/**
 * Told of every call to a registered method once it is answered: the method, `0` for a result or
 * the JSON-RPC error code, and the seconds from dispatch to answer (for metrics). Must not throw.
 */
export type CallObserver = (method: string, code: number, seconds: number) => void;

/** A value, or a promise of it. */
export type MaybePromise<T> = T | Promise<T>;

/**
 * Options of {@link createDispatcher}.
 * From {@link Injected}: `logger` gets handler failures and per-request debug lines, `randomId`
 * makes trace ids and the request ids of notifications, `now` times `durationMs` in logs.
 */
export interface DispatcherOptions extends Injected<RpcLogger> {
  /** The methods served. */
  registry: MethodRegistry;
  /**
   * Scope check. The default grants a method when the identity holds its scope or `*`.
   * @default scopes.includes(requiredScope) || scopes.includes('*')
   */
  authorize?: Authorize | undefined;
  /**
   * Longest batch accepted; a longer one is answered with one `-32600`.
   * @default 50
   */
  maxBatchSize?: number | undefined;
  /**
   * Longest message, in characters, accepted by {@link Dispatcher.handle}; checked before parsing.
   * @default 1048576
   */
  maxMessageBytes?: number | undefined;
  /**
   * Deepest nesting of objects and arrays in `params` (`params` itself is level 1). Deeper
   * params, and params with a `__proto__` key anywhere, are answered `-32602` naming the path
   * before the schema (which recurses) sees them.
   * @default 64
   */
  maxParamsDepth?: number | undefined;
  /**
   * Wraps every handler call, for example to enter the daemon's trace context. Must call `run` and return its result.
   * @default none (the handler runs directly)
   */
  wrap?: WrapHandler | undefined;
  /**
   * Told of every answered call to a registered method (metrics). Costs one clock read per call when set.
   * @default none
   */
  observe?: CallObserver | undefined;
}

/** Turns JSON-RPC text or parsed messages into responses. Transport-independent. */
export interface Dispatcher {
  /**
   * Handles one message as received: checks its size before parsing, parses it,
   * dispatches it and serialises the answer. Resolves to `undefined` when there is
   * nothing to send (a notification, or a batch of notifications). Never rejects.
   */
  handle(text: string, connection: DispatchConnection): Promise<string | undefined>;
  /**
   * Same as {@link Dispatcher.handle}, but answers synchronously when every method involved
   * (scope check, params schema, handler) was synchronous, and with a promise otherwise.
   * Transports use it so a plain call costs no promise. Never throws or rejects.
   */
  process(text: string, connection: DispatchConnection): MaybePromise<string | undefined>;
  /**
   * Dispatches an already parsed message (no size check) and serialises the answer; like
   * {@link Dispatcher.process}, synchronous when every method involved was. `undefined` when
   * there is nothing to send. Never throws or rejects.
   */
  answer(message: unknown, connection: DispatchConnection): MaybePromise<string | undefined>;
  /**
   * Handles an already parsed message (a request object or a batch array) without
   * a size check. Resolves to `undefined` when there is nothing to send. Never rejects.
   */
  dispatch(
    message: unknown,
    connection: DispatchConnection,
  ): Promise<JsonRpcResponse | JsonRpcResponse[] | undefined>;
  /**
   * Runs one method definition, registered or not, for a transport that is no JSON-RPC
   * envelope (a server-sent event stream): the same scope check, params validation, `wrap`
   * and failure logging as a dispatched call. Resolves to the handler's result; rejects with
   * an {@link RpcError}, a thrown non-RpcError becoming `-32603` (logged, never sent as is).
   */
  invoke(method: AnyMethod, params: unknown, connection: DispatchConnection): Promise<unknown>;
  /** Serialises a response; a result that cannot be serialised becomes `-32603` for its id. */
  serialize(response: JsonRpcResponse | JsonRpcResponse[]): string;
  /** The registry served. */
  readonly registry: MethodRegistry;
  /** The effective batch limit. */
  readonly maxBatchSize: number;
  /** The effective message size limit, in characters. */
  readonly maxMessageBytes: number;
}

const optionsSchema = z.object({
  registry: z.instanceof(MethodRegistry, { message: 'registry must be a MethodRegistry' }),
  authorize: fn<Authorize>('authorize').optional(),
  logger: loggerSchema.optional(),
  maxBatchSize: z.number().int().positive().default(50),
  maxMessageBytes: z.number().int().positive().default(1_048_576),
  maxParamsDepth: z.number().int().positive().default(64),
  wrap: fn<WrapHandler>('wrap').optional(),
  observe: fn<CallObserver>('observe').optional(),
  randomId: fn<() => string>('randomId').optional(),
  now: fn<() => number>('now').optional(),
});

/** The default scope rule: the exact scope or the wildcard `*`. */
export const defaultAuthorize: Authorize = (identity, requiredScope) =>
  identity.scopes.includes(requiredScope) || identity.scopes.includes('*');

const internalErrorHint =
  'A handler, authorize or a params refinement threw something other than an RpcError; the client only saw -32603 Internal error. Inspect err for the cause.';

/**
 * Creates a JSON-RPC 2.0 dispatcher over a method registry.
 *
 * @throws {RpcCoreError} `INVALID_OPTIONS` when the options fail validation.
 */
export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const parsed = parseOptions(optionsSchema, options, 'createDispatcher');
  const registry = parsed.registry;
  const authorize = parsed.authorize ?? defaultAuthorize;
  const logger = parsed.logger ?? noopLogger;
  const randomId = parsed.randomId ?? defaultRandomId;
  const now = parsed.now ?? Date.now;
  const { maxBatchSize, maxMessageBytes, maxParamsDepth, wrap, observe } = parsed;
  const neverAborted = new AbortController().signal;

  /** Debug lines are built only when a debug line would be written (a hot path otherwise). */
  const debugEnabled = (): boolean => (logger.isLevelEnabled ? logger.isLevelEnabled('debug') : true);

  function logFailure(context: RequestContext, started: number, error: unknown): never {
    if (!(error instanceof RpcError)) {
      logger.error(
        {
          ...context.bindings(),
          durationMs: now() - started,
          err: error,
          hint: internalErrorHint,
          errorKind: 'internal',
        },
        'rpc handler failed',
      );
    } else if (debugEnabled()) {
      logger.debug(
        { ...context.bindings(), durationMs: now() - started, success: false, errorCode: error.code },
        'rpc call',
      );
    }
    throw error;
  }

  /**
   * Per method: whether its schema turns `{}` into an empty object (no defaults, no
   * transforms), so a call without params, the common case for status methods, skips the
   * parse. Decided once, on first use: a params schema whose verdict on `{}` depends on live
   * state (a refinement reading the clock or a store) must not be used without params.
   */
  const takesEmpty = new WeakMap<AnyMethod, boolean>();
  function acceptsEmpty(method: AnyMethod): boolean {
    let accepts = takesEmpty.get(method);
    if (accepts === undefined) {
      try {
        const result = method.params.safeParse({});
        accepts = result.success && isPlainObject(result.data) && Object.keys(result.data).length === 0;
      } catch {
        accepts = false;
      }
      takesEmpty.set(method, accepts);
    }
    return accepts;
  }

  /** Validates params synchronously; only schemas with async refinements take the async path. */
  function parseParams(method: AnyMethod, rawParams: unknown): unknown {
    if (rawParams === undefined && acceptsEmpty(method)) return {};
    if (rawParams !== undefined) refuseHostile(rawParams, maxParamsDepth);
    const input = rawParams === undefined ? {} : rawParams;
    let parsed: z.ZodSafeParseResult<unknown>;
    try {
      parsed = method.params.safeParse(input);
    } catch (error) {
      if (!(error instanceof z.core.$ZodAsyncError)) throw error;
      return method.params.safeParseAsync(input).then(checkParams);
    }
    return checkParams(parsed);
  }

  /**
   * Runs one call: scope, params, handler. Returns the result directly when the scope
   * check, the params schema and the handler are all synchronous, so a plain method
   * costs no promise at all; otherwise a promise. Throws (or rejects) with the error to answer.
   */
  function runMethod(
    method: AnyMethod,
    id: JsonRpcId | undefined,
    rawParams: unknown,
    connection: DispatchConnection,
  ): unknown {
    const started = now();
    const observedFrom = observe ? performance.now() : 0;
    const requestId = id === undefined || id === null ? randomId() : String(id);
    const context = new RequestContext(method.name, randomId(), requestId, connection, logger, neverAborted);
    const succeed = (result: unknown): unknown => {
      if (debugEnabled()) {
        logger.debug({ ...context.bindings(), durationMs: now() - started, success: true }, 'rpc call');
      }
      observe?.(method.name, 0, (performance.now() - observedFrom) / 1000);
      return result;
    };
    const fail = (error: unknown): never => {
      observe?.(
        method.name,
        error instanceof RpcError ? error.code : -32603,
        (performance.now() - observedFrom) / 1000,
      );
      return logFailure(context, started, error);
    };
    const invoke = (params: unknown): unknown =>
      wrap ? wrap(context, () => method.handler(params, context)) : method.handler(params, context);
    const afterScope = (allowed: boolean): unknown => {
      if (!allowed) throw RpcError.insufficientScope(method.scope);
      const params = parseParams(method, rawParams);
      return isPromiseLike(params) ? Promise.resolve(params).then(invoke) : invoke(params);
    };
    try {
      const allowed = authorize(connection.identity, method.scope);
      const result = isPromiseLike(allowed) ? Promise.resolve(allowed).then(afterScope) : afterScope(allowed);
      return isPromiseLike(result) ? Promise.resolve(result).then(succeed, fail) : succeed(result);
    } catch (error) {
      return fail(error);
    }
  }

  function answerError(id: JsonRpcId | undefined, error: unknown): JsonRpcResponse | undefined {
    if (id === undefined) return undefined;
    return failure(id, error instanceof RpcError ? error.toJSON() : RpcError.internal().toJSON());
  }

  function answerResult(id: JsonRpcId | undefined, result: unknown): JsonRpcResponse | undefined {
    return id === undefined ? undefined : success(id, result === undefined ? null : result);
  }

  function dispatchOne(
    message: unknown,
    connection: DispatchConnection,
  ): MaybePromise<JsonRpcResponse | undefined> {
    if (!isPlainObject(message)) return failure(null, RpcError.invalidRequest().toJSON());
    const hasId = Object.hasOwn(message, 'id');
    const idIsValid = hasId && isValidId(message.id);
    const replyId: JsonRpcId = idIsValid ? (message.id as JsonRpcId) : null;
    const envelopeProblem = describeEnvelopeProblem(message, hasId, idIsValid);
    if (envelopeProblem !== undefined) {
      return failure(replyId, RpcError.invalidRequest(`Invalid Request: ${envelopeProblem}`).toJSON());
    }
    const methodName = message.method as string;
    const id = hasId ? (message.id as JsonRpcId) : undefined;
    const method = registry.get(methodName);
    if (!method) return answerError(id, RpcError.methodNotFound(methodName));
    let result: unknown;
    try {
      result = runMethod(method, id, message.params, connection);
    } catch (error) {
      return answerError(id, error);
    }
    if (isPromiseLike(result)) {
      return Promise.resolve(result).then(
        (value) => answerResult(id, value),
        (error: unknown) => answerError(id, error),
      );
    }
    return answerResult(id, result);
  }

  function dispatchAny(
    message: unknown,
    connection: DispatchConnection,
  ): MaybePromise<JsonRpcResponse | JsonRpcResponse[] | undefined> {
    if (!Array.isArray(message)) return dispatchOne(message, connection);
    if (message.length === 0)
      return failure(null, RpcError.invalidRequest('Invalid Request: empty batch').toJSON());
    if (message.length > maxBatchSize) {
      return failure(
        null,
        RpcError.invalidRequest(`Batch too large: ${message.length} requests, maximum is ${maxBatchSize}`, {
          received: message.length,
          maximum: maxBatchSize,
        }).toJSON(),
      );
    }
    // JSON-RPC lets batch members run in any order; answers still follow request order.
    const answers = message.map((entry) => dispatchOne(entry, connection));
    const collect = (settled: Array<JsonRpcResponse | undefined>) => {
      const responses = settled.filter((answer): answer is JsonRpcResponse => answer !== undefined);
      return responses.length === 0 ? undefined : responses;
    };
    return answers.some(isPromiseLike)
      ? Promise.all(answers).then(collect)
      : collect(answers as Array<JsonRpcResponse | undefined>);
  }

  function serializeOne(response: JsonRpcResponse): string {
    try {
      return JSON.stringify(response);
    } catch (error) {
      logger.error(
        {
          err: error,
          requestId: response.id === null ? undefined : String(response.id),
          hint: 'A handler returned a result JSON cannot represent (BigInt, cycle); the client got -32603.',
          errorKind: 'internal',
        },
        'rpc result not serialisable',
      );
      return JSON.stringify(failure(response.id, RpcError.internal().toJSON()));
    }
  }

  function serialize(response: JsonRpcResponse | JsonRpcResponse[]): string {
    return Array.isArray(response) ? `[${response.map(serializeOne).join(',')}]` : serializeOne(response);
  }

  function process(text: string, connection: DispatchConnection): MaybePromise<string | undefined> {
    // Measured on the raw text so an oversized message costs no parse time.
    if (text.length > maxMessageBytes) {
      return serialize(oversizeFailure(text.length, maxMessageBytes));
    }
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      return serialize(failure(null, RpcError.parseError().toJSON()));
    }
    return answer(message, connection);
  }

  function answer(message: unknown, connection: DispatchConnection): MaybePromise<string | undefined> {
    const response = dispatchAny(message, connection);
    if (isPromiseLike(response)) {
      return Promise.resolve(response).then((value) => (value === undefined ? undefined : serialize(value)));
    }
    return response === undefined ? undefined : serialize(response);
  }

  const handle = async (text: string, connection: DispatchConnection) => process(text, connection);
  const dispatch = async (message: unknown, connection: DispatchConnection) =>
    dispatchAny(message, connection);

  const invoke = async (method: AnyMethod, params: unknown, connection: DispatchConnection) => {
    try {
      return await runMethod(method, undefined, params, connection);
    } catch (error) {
      throw error instanceof RpcError ? error : RpcError.internal();
    }
  };

  return {
    handle,
    process,
    answer,
    dispatch,
    invoke,
    serialize,
    registry,
    maxBatchSize,
    maxMessageBytes,
  };
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

function checkParams(parsed: z.ZodSafeParseResult<unknown>): unknown {
  if (!parsed.success) throw invalidParams(parsed.error.issues);
  return parsed.data;
}

/**
 * The handler context. The per-request child logger is made only when a handler asks
 * for it: most calls never log, and a pino child per request is measurable.
 */
class RequestContext implements MethodContext {
  readonly identity: Identity;
  readonly clientId: string;
  readonly connectionId: string;
  readonly transport: TransportKind;
  readonly #connection: DispatchConnection;
  readonly #neverAborted: AbortSignal;
  #logger: RpcLogger | undefined;

  constructor(
    readonly method: string,
    readonly traceId: string,
    readonly requestId: string,
    connection: DispatchConnection,
    private readonly rootLogger: RpcLogger,
    neverAborted: AbortSignal,
  ) {
    this.identity = connection.identity;
    this.clientId = connection.identity.clientId;
    this.connectionId = connection.connectionId;
    this.transport = connection.transport;
    this.#connection = connection;
    this.#neverAborted = neverAborted;
  }

  /** Read from the connection when asked: a transport may make its signal only on demand. */
  get signal(): AbortSignal {
    return this.#connection.signal ?? this.#neverAborted;
  }

  /** The fields every line about this request carries. */
  bindings(): Record<string, unknown> {
    return {
      traceId: this.traceId,
      method: this.method,
      requestId: this.requestId,
      connectionId: this.connectionId,
      clientId: this.clientId,
    };
  }

  get logger(): RpcLogger {
    if (this.#logger === undefined) {
      this.#logger = this.rootLogger.child ? this.rootLogger.child(this.bindings()) : this.rootLogger;
    }
    return this.#logger;
  }
}

function describeEnvelopeProblem(
  message: Record<string, unknown>,
  hasId: boolean,
  idIsValid: boolean,
): string | undefined {
  if (message.jsonrpc !== '2.0') return "jsonrpc must be exactly '2.0'";
  if (typeof message.method !== 'string') return 'method must be a string';
  if (hasId && !idIsValid) return 'id must be a string, an integer or null';
  if (message.params !== undefined && typeof message.params !== 'object') {
    return 'params must be an object or an array';
  }
  if (message.params === null) return 'params must be an object or an array';
  return undefined;
}

/** Throws `-32602` for params nested too deep or holding a `__proto__` key, naming the path. */
function refuseHostile(params: unknown, maxDepth: number): void {
  const problem = inspectValue(params, { maxDepth });
  if (problem === undefined) return;
  const where = pathText('params', problem.path);
  const issue: ParamIssue =
    problem.kind === 'depth'
      ? { path: problem.path, code: 'too_deep', message: `nested deeper than ${maxDepth} levels` }
      : { path: problem.path, code: 'unsafe_key', message: `the key ${problem.key} is not allowed` };
  throw RpcError.invalidParams(`Invalid params: ${where}: ${issue.message}`, [issue]);
}

function invalidParams(issues: readonly z.core.$ZodIssue[]): RpcError {
  const reduced: ParamIssue[] = issues.flatMap((issue): ParamIssue[] => {
    const path = issue.path.map((key) => (typeof key === 'number' ? key : String(key)));
    // zod reports all extra keys of an object in one issue located at the object
    // itself; split it so each path (and the summary) names the key to remove.
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({
        path: [...path, key],
        code: issue.code,
        message: 'unrecognized key',
      }));
    }
    return [{ path, code: issue.code, message: issue.message }];
  });
  const summary = reduced
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : 'params'}: ${issue.message}`)
    .join('; ');
  return new RpcError(ErrorCodes.InvalidParams, `Invalid params: ${summary}`, { data: { issues: reduced } });
}
