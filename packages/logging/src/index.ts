export {
  createLogger,
  createLoggerOptionsSchema,
  type CreateLoggerOptions,
  isModuleName,
  type RootLogger,
} from './logger.js';
export {
  ERROR_KINDS,
  errorKindSchema,
  type AgentdLogger,
  type ErrorKind,
  type LogFields,
  type Logger,
  type ProblemFields,
} from './fields.js';
export { LEVEL_VALUES, logLevelSchema, logLevelsSchema, type LevelName, type LogLevel } from './levels.js';
export {
  CIRCULAR,
  REDACTED,
  REDACTED_FIELDS,
  REDACTION_CONTRACT_DEPTH,
  REDACTION_MAX_DEPTH,
  TRUNCATED,
  isHeaderMap,
  isPlainHeader,
  isRedactedField,
  PLAIN_HEADERS,
  redactUrls,
  redactValue,
} from './redact.js';
export { currentTrace, runWithTrace, type TraceContext } from './trace.js';
export {
  createRotatingFileStream,
  RotatingFileStream,
  rotatingFileOptionsSchema,
  type RotatingFileOptions,
} from './rotating-file-stream.js';
export {
  sweepLogs,
  sweepOptionsSchema,
  type SweepDeleteReason,
  type SweepOptions,
  type SweepResult,
} from './sweep.js';
export { gzipFile } from './internal/gzip.js';
export { rollFile, type RollFileOptions } from './roll.js';
export { parseSize } from './size.js';
export {
  daemonLoggingSchema,
  logRotationSchema,
  loggingFileSchema,
  resolveDaemonLogOptions,
  sizeSchema,
  tracingSchema,
  type DaemonLoggingConfig,
  type LogRotationConfig,
  type ResolveDaemonLogOptions,
  type ResolvedDaemonLogOptions,
} from './config.js';
export { noopLogger } from './noop-logger.js';
export { LoggingError, type LoggingErrorCode } from './errors.js';
