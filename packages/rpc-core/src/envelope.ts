import type { JsonRpcErrorObject } from './errors.js';

/** A JSON-RPC id: a string, an integer, or `null` (allowed by JSON-RPC 2.0, echoed back as is). */
export type JsonRpcId = string | number | null;

/** A request that expects an answer. */
export interface JsonRpcRequest {
  jsonrpc: '2.0';
  method: string;
  params?: unknown;
  id: JsonRpcId;
}

/** A message without `id`: no answer is sent, not even an error. */
export interface JsonRpcNotification {
  jsonrpc: '2.0';
  method: string;
  params?: unknown;
}

/** A successful answer. */
export interface JsonRpcSuccess {
  jsonrpc: '2.0';
  result: unknown;
  id: JsonRpcId;
}

/** A failed answer; `id` is `null` when the request's id could not be determined. */
export interface JsonRpcFailure {
  jsonrpc: '2.0';
  error: JsonRpcErrorObject;
  id: JsonRpcId;
}

/** Either answer. */
export type JsonRpcResponse = JsonRpcSuccess | JsonRpcFailure;

/** Builds a notification envelope; `params` is omitted when undefined. */
export function createNotification(method: string, params?: unknown): JsonRpcNotification {
  return params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params };
}
