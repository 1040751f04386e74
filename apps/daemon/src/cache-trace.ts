import { isAbsolute, join, resolve } from 'node:path';
import {
  CACHE_TRACE_FILE,
  CACHE_TRACE_MAX_BYTES,
  type CacheTraceRecord,
  type CacheTraceSink,
} from '@agentd/agent-runtime';
import {
  createRotatingFileStream,
  type LogRotationConfig,
  parseSize,
  type RotatingFileStream,
  sweepLogs,
} from '@agentd/logging';

/** The cache-trace stream the daemon hands the agent runtime. */
export interface DaemonCacheTrace extends CacheTraceSink {
  /** Path of the live file. */
  readonly filePath: string;
  /** Finishes pending rotations and closes the file; later records are dropped. */
  close(): Promise<void>;
}

/** What {@link openCacheTrace} needs from the daemon. */
export interface OpenCacheTraceOptions {
  dataDir: string;
  /** The daemon log's directory (`<data dir>/logs` by default). */
  logDir: string;
  /** `daemon.logging.tracing`. */
  tracing:
    | { outputDir?: string | undefined; maxSize?: string | number | undefined; maxFiles?: number | undefined }
    | undefined;
  /** `observability.logRotation`. */
  logRotation: LogRotationConfig;
  now: () => number;
  logger: {
    warn(fields: Record<string, unknown> & { hint: string; errorKind: string }, message?: string): void;
  };
}

/**
 * Opens `cache-trace.jsonl` (one JSON line per model call, prompt-cache figures only) in
 * `daemon.logging.tracing.outputDir` (relative paths under the data dir), else the logs
 * directory. It rolls at `tracing.maxSize`, else at the contract's 50 MB cap (or a smaller
 * `logRotation.maxSizeBytes`), keeps `tracing.maxFiles`, else `logRotation.maxFiles`, copies,
 * gzipped when `logRotation.compressAged`. A trace directory apart from the logs directory
 * gets the same start-up sweep. When the file cannot be opened the daemon runs without a
 * cache trace (warn), since losing cache figures must not stop agents.
 */
export async function openCacheTrace(options: OpenCacheTraceOptions): Promise<DaemonCacheTrace | undefined> {
  const { tracing, logRotation, logger } = options;
  const outputDir = tracing?.outputDir;
  const dir = outputDir
    ? isAbsolute(outputDir)
      ? outputDir
      : resolve(options.dataDir, outputDir)
    : options.logDir;
  const maxFiles = tracing?.maxFiles ?? logRotation.maxFiles;
  if (resolve(dir) !== resolve(options.logDir)) {
    await sweepLogs({
      dir,
      maxFiles,
      maxAgeDays: logRotation.maxAgeDays,
      compressAged: logRotation.compressAged,
      now: options.now,
    }).catch((error: unknown) =>
      logger.warn(
        {
          err: error,
          dir,
          hint: 'check permissions of daemon.logging.tracing.outputDir',
          errorKind: 'resource',
        },
        'cache trace sweep failed',
      ),
    );
  }
  let stream: RotatingFileStream;
  try {
    stream = createRotatingFileStream({
      filePath: join(dir, CACHE_TRACE_FILE),
      maxSizeBytes:
        tracing?.maxSize !== undefined
          ? parseSize(tracing.maxSize)
          : Math.min(CACHE_TRACE_MAX_BYTES, logRotation.maxSizeBytes),
      maxFiles,
      compress: logRotation.compressAged,
    });
  } catch (error) {
    logger.warn(
      {
        err: error,
        dir,
        hint: 'the cache trace is off until the directory is writable; check daemon.logging.tracing.outputDir and free space',
        errorKind: 'resource',
      },
      'cache trace not opened',
    );
    return undefined;
  }
  // A failing write or rotation warns once until a write succeeds again, not once per model call.
  let failing = false;
  stream.on('error', (error: unknown) => {
    if (failing) return;
    failing = true;
    logger.warn(
      {
        err: error,
        hint: 'check free space and permissions of the cache-trace directory',
        errorKind: 'resource',
      },
      'cache trace write failed',
    );
  });
  return {
    filePath: stream.filePath,
    append(record: CacheTraceRecord) {
      if (stream.write(`${JSON.stringify(record)}\n`)) failing = false;
    },
    close: () => stream.close(),
  };
}
