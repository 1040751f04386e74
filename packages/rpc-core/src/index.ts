export type {
  Authorize,
  DispatchConnection,
  Dispatcher,
  DispatcherOptions,
  WrapHandler,
} from './dispatcher.js';
export { createDispatcher, defaultAuthorize } from './dispatcher.js';
export type {
  JsonRpcFailure,
  JsonRpcId,
  JsonRpcNotification,
  JsonRpcRequest,
  JsonRpcResponse,
  JsonRpcSuccess,
} from './envelope.js';
export { createNotification } from './envelope.js';
export type {
  ErrorCode,
  JsonRpcErrorObject,
  ParamIssue,
  RpcCoreErrorCode,
  RpcCoreErrorOptions,
  RpcErrorOptions,
} from './errors.js';
export { ErrorCodes, RpcCoreError, RpcError } from './errors.js';
export type { ErrorKind, ProblemFields, RpcLogger } from './logger.js';
export { noopLogger } from './logger.js';
export type {
  AnyMethod,
  Identity,
  MethodContext,
  MethodDefinition,
  MethodScope,
  TransportKind,
} from './method.js';
export { defineMethod, MethodRegistry } from './method.js';
export type {
  Authenticate,
  RateLimiter,
  WebSocketTransport,
  WebSocketTransportOptions,
} from './websocket-transport.js';
export { createWebSocketTransport } from './websocket-transport.js';
export type { GatewayTransportConfig } from './gateway-transport-schema.js';
export { gatewayTransportSchema, WS_MESSAGE_RATE_LIMIT_MAX } from './gateway-transport-schema.js';
export type { HttpRpcHandler, HttpRpcHandlerOptions } from './http-handler.js';
export { createHttpRpcHandler } from './http-handler.js';
export type {
  MemoryClient,
  MemoryClientEvents,
  MemoryPair,
  MemoryPairOptions,
  MemoryServerEnd,
} from './memory-pair.js';
export { createMemoryPair } from './memory-pair.js';
export type {
  JsonSchema,
  OpenRpcContentDescriptor,
  OpenRpcDocument,
  OpenRpcInfo,
  OpenRpcMethod,
} from './openrpc.js';
export { rpcDiscoverMethod, toOpenRpc } from './openrpc.js';
export type { SseRpcHandler, SseRpcHandlerOptions } from './sse-handler.js';
export { createSseRpcHandler } from './sse-handler.js';
export type { SseEvent, SseWriter, SseWriterOptions } from './sse-writer.js';
export { createSseWriter } from './sse-writer.js';
