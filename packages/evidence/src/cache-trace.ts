import { isAbsolute, join, resolve } from 'node:path';
import {
  createRotatingFileStream,
  type LogRotationConfig,
  parseSize,
  type RotatingFileStream,
  sweepLogs,
} from '@agentd/logging';
import { z } from 'zod';
import type { EvidenceLogger } from './logger.js';

/** File name of the cache-trace stream in the daemon's logs directory. */
export const CACHE_TRACE_FILE = 'cache-trace.jsonl';

/** Size at which the cache-trace file rolls (the contract's per-stream cap, 50 MB). */
export const CACHE_TRACE_MAX_BYTES = 50 * 1024 * 1024;

/**
 * One line of the cache-trace stream: the prompt-cache figures of one model call. Counts and
 * ids only; never prompt or reply text.
 */
export const cacheTraceRecordSchema = z.object({
  /** When the call finished (epoch ms). */
  ts: z.number().int(),
  traceId: z.string(),
  sessionKey: z.string(),
  agentId: z.string(),
  /** Provider id (config key). */
  provider: z.string(),
  model: z.string(),
  /** The model call's step within its turn (1-based). */
  step: z.number().int().positive(),
  /** Input tokens of the call, cached ones included. */
  inputTokens: z.number().int().nonnegative(),
  cacheReadTokens: z.number().int().nonnegative(),
  cacheWriteTokens: z.number().int().nonnegative(),
  /** Whether the provider served part of the prompt from its cache (`cacheReadTokens > 0`). */
  hit: z.boolean(),
});

/** One cache-trace line. */
export type CacheTraceRecord = z.infer<typeof cacheTraceRecordSchema>;

/**
 * Receives one record per model call. The daemon appends them as JSON lines to a rotating
 * `logs/cache-trace.jsonl`; `append` should not block for long, and a throw is logged and
 * never fails a turn.
 */
export interface CacheTraceSink {
  append(record: CacheTraceRecord): void;
}

/** The open cache-trace file, the sink the daemon hands the agent runtime. */
export interface CacheTraceStream extends CacheTraceSink {
  /** Path of the live file. */
  readonly filePath: string;
  /**
   * Applies a new `daemon.logging.tracing`, `observability.logRotation` or log directory in
   * place (config hot-reload): roll size, copies and compression from the next record; a new
   * directory moves the live file there between two records (no sweep runs there until the
   * next start).
   * @throws the logging package's `FILE_OPEN_FAILED` when the new directory is not writable
   * (the file stays where it was).
   */
  applyOptions(options: CacheTraceSettings): void;
  /** Finishes pending rotations and closes the file; later records are dropped. */
  close(): Promise<void>;
}

/** What decides where the cache trace lives and how it rolls. */
export interface CacheTraceSettings {
  dataDir: string;
  /** The daemon log's directory (`<data dir>/logs` by default). */
  logDir: string;
  /** `daemon.logging.tracing`. */
  tracing:
    | { outputDir?: string | undefined; maxSize?: string | number | undefined; maxFiles?: number | undefined }
    | undefined;
  /** `observability.logRotation`. */
  logRotation: LogRotationConfig;
}

/** The file and rotation options {@link CacheTraceSettings} ask for. */
function cacheTraceFile(settings: CacheTraceSettings) {
  const { tracing, logRotation } = settings;
  const outputDir = tracing?.outputDir;
  const dir = outputDir
    ? isAbsolute(outputDir)
      ? outputDir
      : resolve(settings.dataDir, outputDir)
    : settings.logDir;
  return {
    dir,
    filePath: join(dir, CACHE_TRACE_FILE),
    maxSizeBytes:
      tracing?.maxSize !== undefined
        ? parseSize(tracing.maxSize)
        : Math.min(CACHE_TRACE_MAX_BYTES, logRotation.maxSizeBytes),
    maxFiles: tracing?.maxFiles ?? logRotation.maxFiles,
    compress: logRotation.compressAged,
  };
}

/** Options of {@link openCacheTrace}. */
export interface OpenCacheTraceOptions extends CacheTraceSettings {
  now: () => number;
  logger: EvidenceLogger;
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
export async function openCacheTrace(options: OpenCacheTraceOptions): Promise<CacheTraceStream | undefined> {
  const { logRotation, logger } = options;
  const { dir, maxFiles, ...file } = cacheTraceFile(options);
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
    stream = createRotatingFileStream({ ...file, maxFiles });
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
    get filePath() {
      return stream.filePath;
    },
    applyOptions(settings) {
      const { dir: _dir, ...next } = cacheTraceFile(settings);
      stream.applyOptions(next);
    },
    append(record: CacheTraceRecord) {
      if (stream.write(`${JSON.stringify(record)}\n`)) failing = false;
    },
    close: () => stream.close(),
  };
}
