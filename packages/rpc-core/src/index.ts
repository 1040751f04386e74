export {
  type Authorize,
  createDispatcher,
  type DispatchConnection,
  type Dispatcher,
  type DispatcherOptions,
  defaultAuthorize,
  type WrapHandler,
  type CallObserver,
} from './dispatcher.js';
export {
  createNotification,
  type JsonRpcFailure,
  type JsonRpcId,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
  type JsonRpcSuccess,
} from './envelope.js';
export {
  type ErrorCode,
  ErrorCodes,
  type JsonRpcErrorObject,
  type ParamIssue,
  RpcCoreError,
  type RpcCoreErrorCode,
  type RpcCoreErrorOptions,
  RpcError,
  type RpcErrorOptions,
} from './errors.js';
export { type ErrorKind, noopLogger, type ProblemFields, type RpcLogger } from './logger.js';
export {
  type AnyMethod,
  defineMethod,
  type Identity,
  type MethodContext,
  type MethodDefinition,
  MethodRegistry,
  type MethodScope,
  type TransportKind,
} from './method.js';
export {
  type Authenticate,
  createWebSocketTransport,
  type RateLimiter,
  type WebSocketTransport,
  type WebSocketTransportOptions,
} from './websocket-transport.js';
export {
  type GatewayTransportConfig,
  gatewayTransportSchema,
  WS_MESSAGE_RATE_LIMIT_MAX,
} from './gateway-transport-schema.js';
export { createHttpRpcHandler, type HttpRpcHandler, type HttpRpcHandlerOptions } from './http-handler.js';
export {
  createMemoryPair,
  type MemoryClient,
  type MemoryClientEvents,
  type MemoryPair,
  type MemoryPairOptions,
  type MemoryServerEnd,
} from './memory-pair.js';
export {
  type JsonSchema,
  type OpenRpcContentDescriptor,
  type OpenRpcDocument,
  type OpenRpcInfo,
  type OpenRpcMethod,
  rpcDiscoverMethod,
  toOpenRpc,
} from './openrpc.js';
export { createSseRpcHandler, type SseRpcHandler, type SseRpcHandlerOptions } from './sse-handler.js';
export { createSseWriter, type SseEvent, type SseWriter, type SseWriterOptions } from './sse-writer.js';
