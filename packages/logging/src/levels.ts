import { z } from 'zod';

/**
 * Numeric value of every level the root logger knows, pino's standard levels
 * plus `audit` between info and warn as the contract lists them.
 */
export const LEVEL_VALUES = {
  fatal: 60,
  error: 50,
  warn: 40,
  audit: 35,
  info: 30,
  debug: 20,
  trace: 10,
} as const;

/** Any level a line can be written at, `audit` included. */
export type LevelName = keyof typeof LEVEL_VALUES;

/**
 * Levels accepted for a module threshold (`daemon.logLevels`, `daemon.setLogLevel`).
 * `audit` is a level lines are written at, never a threshold, so it is not accepted here.
 */
export const logLevelSchema = z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal']);

/** A module threshold: trace, debug, info, warn, error or fatal. */
export type LogLevel = z.infer<typeof logLevelSchema>;

/** Per-module thresholds as configured under `daemon.logLevels`. */
export const logLevelsSchema = z.record(z.string().min(1), logLevelSchema);
