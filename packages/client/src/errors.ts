import type { AgentdErrorOptions } from '@agentd/contracts';
import { AgentdError } from '@agentd/errors';

/**
 * Codes of {@link ClientError}: failures that happened on this side of the wire.
 *
 * - `UNAUTHORIZED`: the server refused the token (WebSocket close 4001, HTTP 401).
 * - `TIMEOUT`: no answer within the request (or connect) timeout.
 * - `CLOSED`: the connection closed while the request was in flight, or the client was closed.
 * - `ABORTED`: the caller's `AbortSignal` fired.
 * - `NOT_CONNECTED`: there is no connection and none is being established.
 * - `CONNECT_FAILED`: the server could not be reached (or reconnecting gave up).
 * - `BAD_RESPONSE`: the server answered with something that is not a JSON-RPC 2.0 response.
 * - `INVALID_OPTIONS`: a factory received options it cannot work with.
 * - `INVALID_ARGUMENT`: a method name or params value cannot be sent.
 */
export type ClientErrorCode =
  | 'UNAUTHORIZED'
  | 'TIMEOUT'
  | 'CLOSED'
  | 'ABORTED'
  | 'NOT_CONNECTED'
  | 'CONNECT_FAILED'
  | 'BAD_RESPONSE'
  | 'INVALID_OPTIONS'
  | 'INVALID_ARGUMENT';

/**
 * Options accepted by the {@link ClientError} constructor. `data`: structured details (close code,
 * HTTP status, the JSON-RPC error object...).
 */
export type ClientErrorOptions = AgentdErrorOptions<unknown>;

/**
 * A local failure of the client: the request never got a JSON-RPC answer.
 *
 * This is the package's base error class. Answers the server did send as
 * JSON-RPC errors are {@link RpcCallError} instead, because their numeric codes
 * come from the wire and mean something different from these string codes.
 */
export class ClientError extends AgentdError<ClientErrorCode, unknown> {
  override readonly name: string = 'ClientError';
}

/** A JSON-RPC 2.0 error object as it travels on the wire. */
export interface WireError {
  /** Numeric JSON-RPC error code, for example `-32601`. */
  code: number;
  /** Human-readable message chosen by the server. */
  message: string;
  /** Optional structured details, for example `{ issues }` for invalid params. */
  data?: unknown;
}

/** Well-known JSON-RPC error codes used by agentd, to compare against {@link RpcCallError.code}. */
export const RPC_ERROR_CODES = {
  /** Invalid JSON, or a binary WebSocket frame. */
  PARSE_ERROR: -32700,
  /** Malformed request, batch too large or message too large. */
  INVALID_REQUEST: -32600,
  /** The method is not registered. */
  METHOD_NOT_FOUND: -32601,
  /** Params failed validation; `data.issues` lists the problems. */
  INVALID_PARAMS: -32602,
  /** Insufficient scope, or a handler error. */
  INTERNAL_ERROR: -32603,
  /** Message or method rate limit exceeded. */
  RATE_LIMITED: -32000,
  /** An agent, session, job, graph or run does not exist. */
  NOT_FOUND: -32004,
  /**
   * Cluster mode: what the call names lives on another instance; `data` is
   * `{ code: 'INSTANCE_AFFINITY', instanceId, advertiseUrl }`: call `advertiseUrl` instead.
   */
  INSTANCE_AFFINITY: -32010,
} as const;

/**
 * The server answered a request with a JSON-RPC error object.
 *
 * `code`, `message` and `data` are copied from the wire; `method` names the
 * call that failed when the client knows it.
 */
export class RpcCallError extends Error {
  override readonly name: string = 'RpcCallError';
  /** Numeric JSON-RPC error code from the server. */
  readonly code: number;
  /** `data` member of the error object, when the server sent one. */
  readonly data?: unknown;
  /** The method whose call failed, when known. */
  readonly method?: string;

  constructor(error: WireError, method?: string) {
    super(error.message);
    this.code = error.code;
    if (error.data !== undefined) this.data = error.data;
    if (method !== undefined) this.method = method;
  }

  /** The error as a JSON-RPC error object again, for logging or forwarding. */
  toJSON(): WireError {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}
