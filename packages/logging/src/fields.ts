import type { ErrorKind, ProblemFields as ContractProblemFields } from '@agentd/contracts';
import { z } from 'zod';
import type { LevelName } from './levels.js';

export type { ErrorKind } from '@agentd/contracts';

/** The `errorKind` values the contract allows on warn, error and fatal lines. */
export const ERROR_KINDS = [
  'config',
  'network',
  'auth',
  'validation',
  'timeout',
  'resource',
  'dependency',
  'internal',
  'platform',
] as const satisfies readonly ErrorKind[];

/** Zod schema of {@link ErrorKind}. */
export const errorKindSchema = z.enum(ERROR_KINDS);

/**
 * The contract's canonical log field dictionary. Every field is optional and typed;
 * other fields are allowed through the index signature so call sites can add context,
 * but a canonical name given the wrong type is a compile error.
 */
export interface LogFields {
  // Identity
  /** Agent the line concerns. */
  agentId?: string;
  /** Request trace id; injected automatically inside {@link runWithTrace}. */
  traceId?: string;
  /** Chat platform of the channel (telegram, slack, ...). */
  channelType?: string;
  /** Bound by the logger itself (`root.module(name)` or `child({ module })`); do not pass per line. */
  module?: string;
  // Timing
  /** Duration of the operation in milliseconds. */
  durationMs?: number;
  /** Time the daemon took to start. */
  startupDurationMs?: number;
  /** Time the daemon took to shut down. */
  shutdownDurationMs?: number;
  /** How long a connection stayed open. */
  connectionDurationMs?: number;
  // Operation
  /** Tool being run. */
  toolName?: string;
  /** JSON-RPC method. */
  method?: string;
  /** JSON-RPC request id (stringified). */
  requestId?: string;
  // Error
  /** The error; the key is `err`, never `error`. Serialized by pino's err serializer. */
  err?: unknown;
  /** What an operator should do or check. Required on warn, error and fatal. */
  hint?: string;
  /** Classification of the problem. Required on warn, error and fatal. */
  errorKind?: ErrorKind;
  // Tokens and cost
  tokensIn?: number;
  tokensOut?: number;
  tokensTotal?: number;
  cacheReadTokens?: number;
  cacheCreationTokens?: number;
  estimatedCostUsd?: number;
  // Pipeline
  /** Pipeline step; memory writes use extract, store, link, consolidate. */
  step?: string;
  reason?: string;
  inputLen?: number;
  outputLen?: number;
  itemCount?: number;
  success?: boolean;
  // WebSocket
  activeConnections?: number;
  closeCode?: number;
  closeReason?: string;
  closeType?: string;
  connectionId?: string;
  clientId?: string;
  // Message
  messageTruncated?: boolean;
  messageLen?: number;
  responseLen?: number;
  // Agent execution
  llmCalls?: number;
  toolCalls?: number;
  prunedMessages?: number;
  sessionMessageCount?: number;
  stopReason?: string;
  // System
  instanceId?: string;
  configName?: string;
  shutdownOrder?: number;
  // Truncation flags
  paramsTruncated?: boolean;
  queryTruncated?: boolean;
  /** Any other context. */
  [field: string]: unknown;
}

/**
 * Fields of a warn, error or fatal line: the contract's `ProblemFields` (`hint` and
 * `errorKind` mandatory, the error under `err`) typed with the {@link LogFields} dictionary.
 */
export type ProblemFields = LogFields & ContractProblemFields;

/**
 * The typed logger every agentd module receives. warn, error and fatal demand
 * `hint` and `errorKind` at compile time; the other levels take any {@link LogFields}
 * or a bare message.
 */
export interface AgentdLogger {
  /** The process cannot go on. */
  fatal(fields: ProblemFields, message?: string): void;
  /** An operation failed. */
  error(fields: ProblemFields, message?: string): void;
  /** Something degraded but the operation went on. */
  warn(fields: ProblemFields, message?: string): void;
  /** A security-relevant action (level 35, between info and warn). */
  audit(fields: LogFields, message?: string): void;
  /** Normal operation worth recording. */
  info(fields: LogFields, message?: string): void;
  info(message: string): void;
  /** Detail for diagnosing a module. */
  debug(fields: LogFields, message?: string): void;
  debug(message: string): void;
  /** Very verbose detail. */
  trace(fields: LogFields, message?: string): void;
  trace(message: string): void;
  /**
   * A logger whose lines all carry `bindings`. A string `module` binding moves the
   * child (and its descendants) under that module's level.
   */
  child(bindings: LogFields): AgentdLogger;
  /** Whether a line at `level` would be written now. */
  isLevelEnabled(level: LevelName): boolean;
  /** The current threshold of this logger's module, or `silent` for {@link noopLogger}. */
  readonly level: string;
}

/**
 * The minimal pino-compatible logger shape other packages declare locally and
 * accept by injection. A pino instance, an {@link AgentdLogger} and
 * {@link noopLogger} all satisfy it.
 */
export interface Logger {
  fatal(fields: object, message?: string): void;
  error(fields: object, message?: string): void;
  warn(fields: object, message?: string): void;
  info(fields: object, message?: string): void;
  debug(fields: object, message?: string): void;
  trace(fields: object, message?: string): void;
  child(bindings: Record<string, unknown>): Logger;
}
