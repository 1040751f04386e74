import { ClientError, type WireError } from '../errors.js';

export type JsonRpcId = string | number;

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  method: string;
  params?: unknown;
  id?: JsonRpcId;
}

/** What an incoming JSON value turned out to be. */
export type IncomingMessage =
  | { kind: 'result'; id: JsonRpcId; result: unknown }
  | { kind: 'error'; id: JsonRpcId | null; error: WireError }
  | { kind: 'notification'; method: string; params: unknown }
  | { kind: 'request'; id: JsonRpcId; method: string }
  | { kind: 'invalid' };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isId(value: unknown): value is JsonRpcId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
}

/** Reads a JSON-RPC error object, or returns undefined when the value is not one. */
export function readWireError(value: unknown): WireError | undefined {
  if (!isRecord(value)) return undefined;
  if (typeof value.code !== 'number' || typeof value.message !== 'string') return undefined;
  return value.data === undefined
    ? { code: value.code, message: value.message }
    : { code: value.code, message: value.message, data: value.data };
}

/**
 * Sorts one parsed JSON value into response, notification or request.
 * `jsonrpc: '2.0'` is not insisted on: the shape alone is unambiguous, and a
 * client that drops otherwise usable answers helps nobody.
 */
export function classify(value: unknown): IncomingMessage {
  if (!isRecord(value)) return { kind: 'invalid' };
  if (typeof value.method === 'string') {
    if (value.id === undefined || value.id === null) {
      return { kind: 'notification', method: value.method, params: value.params };
    }
    if (isId(value.id)) return { kind: 'request', id: value.id, method: value.method };
    return { kind: 'invalid' };
  }
  if ('error' in value) {
    const error = readWireError(value.error);
    if (!error) return { kind: 'invalid' };
    if (value.id === null || value.id === undefined) return { kind: 'error', id: null, error };
    if (isId(value.id)) return { kind: 'error', id: value.id, error };
    return { kind: 'invalid' };
  }
  if ('result' in value && isId(value.id)) return { kind: 'result', id: value.id, result: value.result };
  return { kind: 'invalid' };
}

/** Rejects method names and params the server could never accept, before anything is sent. */
export function checkRequest(method: unknown, params: unknown): asserts method is string {
  if (typeof method !== 'string' || method.length === 0) {
    throw new ClientError('INVALID_ARGUMENT', 'method must be a non-empty string');
  }
  if (params !== undefined && (typeof params !== 'object' || params === null)) {
    throw new ClientError(
      'INVALID_ARGUMENT',
      `params of ${method} must be an object or an array (JSON-RPC 2.0 by-name or by-position)`,
    );
  }
}

export function buildRequest(method: string, params: unknown, id: JsonRpcId | undefined): JsonRpcRequest {
  const request: JsonRpcRequest = { jsonrpc: '2.0', method };
  if (params !== undefined) request.params = params;
  if (id !== undefined) request.id = id;
  return request;
}

/** JSON.stringify that reports unserialisable params (cycles, BigInt) as a client error. */
export function serialise(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (error) {
    throw new ClientError('INVALID_ARGUMENT', 'request params cannot be serialised as JSON', {
      cause: error,
    });
  }
}
