import type { AgentdErrorOptions, InstanceAffinityData, ValidationIssue } from '@agentd/contracts';
import { AgentdError } from '@agentd/errors';

/**
 * Numeric JSON-RPC error codes used on the wire.
 *
 * The first five are fixed by JSON-RPC 2.0. The server-defined ones follow the
 * interface document and its decisions page: `-32000` for rate limits,
 * `-32004` for an unknown entity, `-32001` for a failed HTTP authentication, `-32010` for a
 * call that belongs on another instance of a cluster.
 */
export const ErrorCodes = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  RateLimited: -32000,
  Unauthorized: -32001,
  NotFound: -32004,
  InstanceAffinity: -32010,
} as const;

/** One of the values of {@link ErrorCodes}; handlers may still use any integer. */
export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

/** The `error` member of a JSON-RPC failure response. */
export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/** One zod issue reduced to what is safe and useful to send to a client. */
export type ParamIssue = ValidationIssue;

/**
 * Options accepted by the {@link RpcError} constructor. `data`: extra structured detail sent to
 * the client as `error.data`; `cause` is kept for logs, never serialised.
 */
export type RpcErrorOptions = AgentdErrorOptions<unknown>;

/**
 * An error meant for the client: a numeric JSON-RPC `code`, a `message` and
 * optional `data`. Throw it from a handler to control exactly what the caller
 * sees; anything else thrown becomes a bare `-32603 Internal error`.
 */
export class RpcError extends Error {
  override readonly name = 'RpcError';
  /** The JSON-RPC error code. */
  readonly code: number;
  /** Structured detail sent as `error.data`; omitted from the wire when undefined. */
  readonly data: unknown;

  constructor(code: number, message: string, options: RpcErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.data = options.data;
  }

  /** The wire form, `{ code, message, data? }`. */
  toJSON(): JsonRpcErrorObject {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }

  /** `-32700`: the text is not JSON, or a binary frame arrived. */
  static parseError(message = 'Parse error'): RpcError {
    return new RpcError(ErrorCodes.ParseError, message);
  }

  /** `-32600`: the envelope is not a valid JSON-RPC request, or a size or batch limit was exceeded. */
  static invalidRequest(message = 'Invalid Request', data?: unknown): RpcError {
    return new RpcError(ErrorCodes.InvalidRequest, message, { data });
  }

  /** `-32601 Method not found: <method>`. */
  static methodNotFound(method: string): RpcError {
    return new RpcError(ErrorCodes.MethodNotFound, `Method not found: ${method}`);
  }

  /** `-32602` with `data: { issues }` so clients can point at the offending fields. */
  static invalidParams(message: string, issues: ParamIssue[] = []): RpcError {
    return new RpcError(ErrorCodes.InvalidParams, message, { data: { issues } });
  }

  /** `-32603`; the default message deliberately says nothing about the cause. */
  static internal(message = 'Internal error', cause?: unknown): RpcError {
    return new RpcError(ErrorCodes.InternalError, message, { cause });
  }

  /** `-32603 Insufficient scope: requires '<scope>'`, as the interface document prescribes. */
  static insufficientScope(scope: string): RpcError {
    return new RpcError(ErrorCodes.InternalError, `Insufficient scope: requires '${scope}'`);
  }

  /** `-32000`; the default message is the one the interface document uses for the WebSocket limiter. */
  static rateLimited(message = 'Message rate limit exceeded'): RpcError {
    return new RpcError(ErrorCodes.RateLimited, message);
  }

  /** `-32001 Unauthorized`, the body of an HTTP 401. */
  static unauthorized(message = 'Unauthorized'): RpcError {
    return new RpcError(ErrorCodes.Unauthorized, message);
  }

  /** `-32004 <Kind> not found: <id>`, for example `RpcError.notFound('session', 'a:b')` → `Session not found: a:b`. */
  static notFound(kind: string, id: string | number): RpcError {
    const label = kind.length > 0 ? kind[0]!.toUpperCase() + kind.slice(1) : kind;
    return new RpcError(ErrorCodes.NotFound, `${label} not found: ${id}`, { data: { kind, id } });
  }

  /**
   * `-32010`: what the call names lives on another instance (`owner`, from its membership row);
   * `what` says what, e.g. `Browser tab ab12cd34`.
   */
  static instanceAffinity(what: string, owner: { instanceId: string; advertiseUrl: string }): RpcError {
    const data: InstanceAffinityData = {
      code: 'INSTANCE_AFFINITY',
      instanceId: owner.instanceId,
      advertiseUrl: owner.advertiseUrl,
    };
    return new RpcError(
      ErrorCodes.InstanceAffinity,
      `${what} is held by instance ${owner.instanceId}; call ${owner.advertiseUrl || 'that instance'}`,
      { data },
    );
  }

  /** Rebuilds an {@link RpcError} from a received `error` member (used by clients of the memory pair). */
  static fromJSON(error: JsonRpcErrorObject): RpcError {
    return new RpcError(error.code, error.message, { data: error.data });
  }
}

/**
 * Every code an {@link RpcCoreError} can carry.
 *
 * - `INVALID_OPTIONS`: a factory received options that fail validation.
 * - `INVALID_METHOD`: `defineMethod` received a malformed definition.
 * - `DUPLICATE_METHOD`: a registry already holds a method of that name.
 * - `INVALID_ARGUMENT`: a call argument is malformed (for example an SSE event name with a newline).
 * - `TRANSPORT_CLOSED`: the connection or transport was closed before the operation finished.
 * - `TIMEOUT`: a request got no answer within its time limit.
 */
export type RpcCoreErrorCode =
  | 'INVALID_OPTIONS'
  | 'INVALID_METHOD'
  | 'DUPLICATE_METHOD'
  | 'INVALID_ARGUMENT'
  | 'TRANSPORT_CLOSED'
  | 'TIMEOUT';

/**
 * Options accepted by the {@link RpcCoreError} constructor. `data`: structured details safe to log.
 */
export type RpcCoreErrorOptions = AgentdErrorOptions;

/**
 * The local error of this package: misuse, closed transports, timeouts. It is
 * never sent to a client; if a handler lets one escape, the client sees
 * `-32603 Internal error` like for any other non-{@link RpcError}.
 */
export class RpcCoreError extends AgentdError<RpcCoreErrorCode> {
  override readonly name = 'RpcCoreError';
}
