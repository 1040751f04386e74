import type { JsonRpcErrorObject } from '../errors.js';
import type { JsonRpcFailure, JsonRpcId, JsonRpcSuccess } from '../envelope.js';

export function failure(id: JsonRpcId, error: JsonRpcErrorObject): JsonRpcFailure {
  return { jsonrpc: '2.0', error, id };
}

export function success(id: JsonRpcId, result: unknown): JsonRpcSuccess {
  return { jsonrpc: '2.0', result, id };
}

export function isValidId(value: unknown): value is JsonRpcId {
  return (
    value === null || typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value))
  );
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
