export {
  ClientError,
  type ClientErrorCode,
  type ClientErrorOptions,
  RPC_ERROR_CODES,
  RpcCallError,
  type WireError,
} from './errors.js';
export {
  createHttpClient,
  type FetchFunction,
  type HttpClient,
  type HttpClientOptions,
} from './http-client.js';
export { type ClientLogger, type ErrorKind, type ProblemFields, silentLogger } from './logger.js';
export type {
  AgentdMethodName,
  AgentdMethods,
  AgentdNotifications,
  BatchEntry,
  BatchResults,
  CallArguments,
  CallOptions,
  ConfigChangeResult,
  EmptyParams,
  MemoryFilterParams,
  MemoryRecordInfo,
  MemorySearchEntry,
  MemoryStatsInfo,
  MethodName,
  MethodParams,
  MethodResult,
  OpenRpcDocument,
  OpenRpcMethod,
  TokenInfo,
  TokenScope,
} from './methods.js';
export {
  type CloseInfo,
  createWsClient,
  type ReconnectInfo,
  type ReconnectOptions,
  type WebSocketConstructor,
  type WebSocketLike,
  type WsClient,
  type WsClientEvents,
  type WsClientOptions,
  type WsClientState,
} from './ws-client.js';
