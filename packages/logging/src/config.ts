import { dirname, join } from 'node:path';
import { z } from 'zod';
import { logLevelsSchema } from './levels.js';
import { parseSize } from './size.js';

/** A size such as `10m` (see {@link parseSize}) or a byte count. */
export const sizeSchema = z.union([z.string(), z.number()]).superRefine((value, context) => {
  try {
    parseSize(value);
  } catch (error) {
    context.addIssue({ code: 'custom', message: (error as Error).message });
  }
});

/** `daemon.logging.tracing`: where trace files go and how they rotate. */
export const tracingSchema = z.object({
  /** Directory of trace files. Default chosen by the tracing writer. */
  outputDir: z.string().min(1).optional(),
  /** Size at which a trace file rolls, e.g. `5m`. */
  maxSize: sizeSchema.optional(),
  /** Rotated trace files kept, e.g. 3. */
  maxFiles: z.number().int().min(0).optional(),
});

/** `daemon.logging`: the daemon log file. */
export const loggingFileSchema = z.object({
  /** Path of the daemon log. @default `<data dir>/logs/agentd.log` (see {@link resolveDaemonLogOptions}) */
  filePath: z.string().min(1).optional(),
  /** Size at which the daemon log rolls (k, m, g suffixes, binary). @default '10m' */
  maxSize: sizeSchema.default('10m'),
  /** Rotated copies of the daemon log kept. @default 5 */
  maxFiles: z.number().int().min(0).default(5),
  /** Trace file settings. */
  tracing: tracingSchema.optional(),
});

/**
 * The logging keys of the `daemon` config section: `logLevels` (per-module
 * thresholds) and `logging` (the daemon log file). Unknown keys are stripped;
 * the config owner can `.extend()` it with the section's other keys.
 */
export const daemonLoggingSchema = z.object({
  /** Per-module thresholds, e.g. `{ agent: 'debug' }`. @default {} */
  logLevels: logLevelsSchema.default({}),
  /** Daemon log file settings. @default { maxSize: '10m', maxFiles: 5 } */
  logging: loggingFileSchema.prefault({}),
});

/** Parsed `daemon` logging keys. */
export type DaemonLoggingConfig = z.output<typeof daemonLoggingSchema>;

/**
 * `observability.logRotation`: one policy for the daemon log, cache-trace,
 * config-audit, session-index and trajectory streams. It takes precedence over
 * `daemon.logging` for the startup sweep.
 */
export const logRotationSchema = z.object({
  /** Size at which the daemon log rolls. @default 52428800 */
  maxSizeBytes: z.number().int().positive().default(52_428_800),
  /** Rotated copies kept per stream. @default 5 */
  maxFiles: z.number().int().min(0).default(5),
  /** Rotated files older than this are deleted by the startup sweep; 0 disables. @default 30 */
  maxAgeDays: z.number().min(0).default(30),
  /** Gzip rotated files. @default true */
  compressAged: z.boolean().default(true),
});

/** Parsed `observability.logRotation`. */
export type LogRotationConfig = z.output<typeof logRotationSchema>;

/** Input of {@link resolveDaemonLogOptions}. */
export interface ResolveDaemonLogOptions {
  /** The data directory (`./data` by default in the daemon). */
  dataDir: string;
  /** The parsed `daemon` section (at least its logging keys). */
  daemon: DaemonLoggingConfig;
  /** The parsed `observability.logRotation`, when the config has one. */
  logRotation?: LogRotationConfig;
}

/** What {@link resolveDaemonLogOptions} returns: ready-made options for the file and the sweep. */
export interface ResolvedDaemonLogOptions {
  /** For `createLogger({ destination })` / `createRotatingFileStream`. */
  file: { filePath: string; maxSizeBytes: number; maxFiles: number; compress: boolean };
  /** For `sweepLogs` over the log directory. */
  sweep: { dir: string; maxFiles: number; maxAgeDays: number; compressAged: boolean };
}

/**
 * Combines `daemon.logging` and `observability.logRotation` the way the contract
 * orders them: the daemon log rolls at `daemon.logging.maxSize` keeping
 * `daemon.logging.maxFiles` copies, in `<dataDir>/logs/agentd.log` unless
 * `filePath` says otherwise; rotated copies are gzipped when
 * `logRotation.compressAged` (default true); the startup sweep of the log
 * directory uses `logRotation` (its defaults when absent), which takes
 * precedence there.
 */
export function resolveDaemonLogOptions(options: ResolveDaemonLogOptions): ResolvedDaemonLogOptions {
  const rotation = options.logRotation ?? logRotationSchema.parse({});
  const logging = options.daemon.logging;
  const filePath = logging.filePath ?? join(options.dataDir, 'logs', 'agentd.log');
  return {
    file: {
      filePath,
      maxSizeBytes: parseSize(logging.maxSize),
      maxFiles: logging.maxFiles,
      compress: rotation.compressAged,
    },
    sweep: {
      dir: dirname(filePath),
      maxFiles: rotation.maxFiles,
      maxAgeDays: rotation.maxAgeDays,
      compressAged: rotation.compressAged,
    },
  };
}
