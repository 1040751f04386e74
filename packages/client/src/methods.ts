import type { ClusterStatus, EmbeddingCacheStats, MemoryStats } from '@agentd/contracts';
import type { RpcCallError } from './errors.js';

/** Params of a method that takes none; `{}` or leaving them out are both fine. */
export type EmptyParams = Record<string, never>;

/** Scope a token can hold: `rpc` for client operations, `admin` for management, `*` for everything. */
export type TokenScope = 'rpc' | 'admin' | '*';

/** Per-call options. */
export interface CallOptions {
  /** Overrides `requestTimeoutMs` for this call; `Infinity` waits forever. */
  timeoutMs?: number;
  /** Rejects the call with `ABORTED` when the signal fires; the server may still run it. */
  signal?: AbortSignal;
}

/** One method entry of the OpenRPC document returned by `rpc.discover`. */
export interface OpenRpcMethod {
  /** Full method name, for example `system.ping`. */
  name: string;
  /** What the method does. */
  description?: string;
  /** OpenRPC content descriptors of the params (JSON Schema generated from the server's validators). */
  params: unknown[];
  /** OpenRPC content descriptor of the result. */
  result?: unknown;
  /** Scope a token needs to call the method. */
  'x-scope': 'rpc' | 'admin';
}

/** The OpenRPC document returned by `rpc.discover`. */
export interface OpenRpcDocument {
  /** OpenRPC specification version, for example `1.3.2`. */
  openrpc: string;
  /** Title, version and description of the server. */
  info: { title: string; version: string; description?: string; [key: string]: unknown };
  /** Every registered method. */
  methods: OpenRpcMethod[];
  [key: string]: unknown;
}

/** Result of a config write (`config.patch`, `config.apply`). */
export interface ConfigChangeResult {
  ok: true;
  /** Commit of the new config in the git-backed history. */
  sha: string;
  /** Top-level sections whose content changed. */
  changedSections: string[];
  /** Dot paths of changed keys that only take effect after `gateway.restart`. */
  restartRequired: string[];
  /** True when some change took effect at once (hot sections). */
  applied: boolean;
}

/** A token as listed by `tokens.list`; the secret itself is never listed. */
export interface TokenInfo {
  id: string;
  /** Identity used to target notifications at this token's connections. */
  clientId: string;
  scopes: TokenScope[];
  /** Epoch milliseconds; `null` for a token written into config.yaml by hand without one. */
  createdAt: number | null;
  /** `config` for tokens from config.yaml, `api` for tokens created through tokens.create. */
  source: 'config' | 'api';
}

/**
 * Method name → `{ params; result }` for the methods this client knows.
 *
 * `call` uses it to type params and results; any other method name is still
 * accepted and typed `unknown`, so namespaces added to the server later work
 * before this map learns about them.
 */
export interface AgentdMethods {
  'system.ping': { params: EmptyParams; result: { pong: true; ts: number } };
  'rpc.discover': { params: EmptyParams; result: OpenRpcDocument };
  'gateway.status': {
    params: EmptyParams;
    result: {
      pid: number;
      /** Seconds since the daemon started. */
      uptime: number;
      /** Resident memory in bytes. */
      memoryUsage: number;
      nodeVersion: string;
      configPaths: string[];
      sections: string[];
      /** The cluster mode, this instance's id and the live instances (this one only in single mode). */
      cluster: ClusterStatus;
    };
  };
  'gateway.restart': { params: EmptyParams; result: { ok: true; restarting: true } };
  'daemon.setLogLevel': {
    params: { module: string; level: string };
    result: { ok: true; module: string; level: string; previous?: string };
  };
  'config.read': { params: { section?: string }; result: unknown };
  'config.schema': {
    params: { section?: string };
    result: { schema: Record<string, unknown>; sections: string[]; section?: string };
  };
  'config.patch': { params: Record<string, unknown>; result: ConfigChangeResult };
  'config.apply': { params: Record<string, unknown>; result: ConfigChangeResult };
  'config.diff': { params: { sha?: string }; result: { diff: string } };
  'config.gc': { params: EmptyParams; result: unknown };
  'config.history': {
    params: { limit?: number };
    result: { entries: Array<{ sha: string; date: string; message: string }> };
  };
  'config.rollback': { params: { sha: string }; result: ConfigChangeResult & { restoredFrom: string } };
  'config.get': { params: { section?: string }; result: unknown };
  'config.set': {
    params: { section: string; key: string; value: unknown };
    result: ConfigChangeResult & { previous?: unknown };
  };
  'tokens.list': { params: EmptyParams; result: { tokens: TokenInfo[] } };
  'tokens.create': {
    params: { scopes: TokenScope[]; clientId?: string; id?: string };
    result: { id: string; clientId: string; scopes: TokenScope[]; createdAt: number; token: string };
  };
  /** `force` allows revoking the last token with admin scope. */
  'tokens.revoke': { params: { id: string; force?: boolean }; result: { revoked: true; id: string } };
  'memory.search': {
    params: { query: string; limit?: number } & MemoryFilterParams;
    result: { results: MemorySearchEntry[] };
  };
  'memory.inspect': {
    params: { id?: string };
    result: MemoryRecordInfo | MemoryStatsInfo | TenantMemoryInfo;
  };
  'memory.browse': {
    params: { offset?: number; limit?: number } & MemoryFilterParams;
    result: { entries: MemoryRecordInfo[]; total: number; offset: number; limit: number };
  };
  'memory.delete': {
    params: { id: string };
    result: { id: string; deleted: true; observationsDeleted: number };
  };
  'memory.embeddingCache': {
    params: EmptyParams;
    result: EmbeddingCacheStats;
  };
  'memory.export': { params: { agentId?: string }; result: { entries: MemoryRecordInfo[]; count: number } };
  'memory.flush': { params: { agentId?: string }; result: { flushed: number } };
  'memory.stats': { params: EmptyParams; result: MemoryStatsInfo };
  'memory.store': {
    params: {
      content: string;
      agentId?: string;
      tenant?: string;
      sessionKey?: string;
      tags?: string[];
      metadata?: Record<string, unknown>;
      trust?: 'system' | 'learned' | 'external';
    };
    result: { id: string };
  };
}

/** Filters accepted by memory.search and memory.browse. */
export interface MemoryFilterParams {
  agentId?: string;
  tenant?: string;
  /** Entries carrying every one of these tags. */
  tags?: string[];
  sinceMs?: number;
  untilMs?: number;
}

/** A memory.search result, as the contract shapes it. */
export interface MemorySearchEntry {
  id: string;
  content: string;
  score: number;
  timestamp: number;
}

/** A stored memory entry (browse, export, inspect). */
export interface MemoryRecordInfo {
  id: string;
  agentId: string;
  tenant: string;
  kind: 'memory' | 'observation';
  content: string;
  sessionKey: string | null;
  tags: string[];
  metadata: Record<string, unknown> | null;
  trust: 'system' | 'learned' | 'external';
  createdAt: number;
  embedded: boolean;
  sources?: Array<{ id: string; sessionKey: string | null }>;
  derived?: string[];
}

/** `memory.stats` (and `memory.inspect` without an id): `MemoryStats` from `@agentd/contracts`, as the store reports it. */
export type MemoryStatsInfo = MemoryStats;

/** `memory.inspect` without an id for a tenant-bound token: its tenant's counts and newest entries. */
export interface TenantMemoryInfo {
  tenant: string;
  entries: number;
  memories: number;
  observations: number;
  /** At most 20, newest first. */
  latest: MemoryRecordInfo[];
}

/** Names of the methods in {@link AgentdMethods}. */
export type AgentdMethodName = keyof AgentdMethods;

/**
 * Accepts a known method name (with editor completion) or any other string.
 * The `string & {}` arm keeps the literal names from collapsing into `string`.
 */
export type MethodName = AgentdMethodName | (string & {});

/** Params type of a method; `unknown` for methods this client does not know. */
export type MethodParams<M extends string> = M extends AgentdMethodName
  ? AgentdMethods[M]['params']
  : unknown;

/** Result type of a method; `unknown` for methods this client does not know. */
export type MethodResult<M extends string> = M extends AgentdMethodName
  ? AgentdMethods[M]['result']
  : unknown;

/**
 * Argument list after the method name: params are required only when the
 * method has a required param field.
 */
export type CallArguments<M extends string, O> = M extends AgentdMethodName
  ? {} extends MethodParams<M>
    ? [params?: MethodParams<M>, options?: O]
    : [params: MethodParams<M>, options?: O]
  : [params?: unknown, options?: O];

/** Notification method → params for the notifications the server is known to send. */
export interface AgentdNotifications {
  /** Sent periodically to every connection (`gateway.wsHeartbeatMs`). */
  heartbeat: { ts: number };
  /** Sent to the connections of the token whose sub-agent task completed. */
  'session.completed': { sessionKey: string; result: string };
}

/** One entry of a batch. */
export interface BatchEntry {
  /** Method to call. */
  method: MethodName;
  /** Params; left out of the request when undefined (the server then uses `{}`). */
  params?: unknown;
  /**
   * Send without an `id`: the server answers nothing and the entry's result is `undefined`.
   * @default false
   */
  notification?: boolean;
}

/**
 * Results of a batch, position by position: the method's result, the
 * {@link RpcCallError} the server answered for that entry, or `undefined` for
 * notification entries.
 */
export type BatchResults<T extends readonly BatchEntry[]> = {
  -readonly [K in keyof T]: T[K] extends { notification: true }
    ? undefined
    : T[K] extends { method: infer M extends string }
      ? MethodResult<M> | RpcCallError
      : unknown;
};
