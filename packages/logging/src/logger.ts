import { isUnsafeKey } from '@agentd/input-guards';
import { hostname } from 'node:os';
import { type DestinationStream, type Logger as PinoLogger, pino } from 'pino';
import { z } from 'zod';
import { LoggingError } from './errors.js';
import type { AgentdLogger, ErrorKind, LogFields } from './fields.js';
import { LEVEL_VALUES, type LevelName, type LogLevel, logLevelSchema, logLevelsSchema } from './levels.js';
import { FdStream } from './internal/fd-stream.js';
import { redactLine, redactValue, serializeError } from './redact.js';
import {
  type RotatingFileOptions,
  RotatingFileStream,
  rotatingFileOptionsSchema,
} from './rotating-file-stream.js';
import { currentTrace } from './trace.js';

const writableSchema = z.custom<DestinationStream>(
  (value) =>
    typeof value === 'object' && value !== null && typeof (value as { write?: unknown }).write === 'function',
  { message: 'expected a writable stream (an object with write())' },
);

/** Options of {@link createLogger}. */
export const createLoggerOptionsSchema = z.object({
  /** Threshold of every module without an entry in `logLevels`. @default 'info' */
  level: logLevelSchema.default('info'),
  /** Per-module thresholds (`daemon.logLevels`). @default {} */
  logLevels: logLevelsSchema.default({}),
  /**
   * Where lines go: a writable stream (anything with `write(line)`), or the options
   * of a {@link RotatingFileStream} which the logger then owns and closes.
   * @default stdout
   */
  destination: z.union([writableSchema, rotatingFileOptionsSchema]).optional(),
  /** With a file destination, copy every line to stdout as well. @default false */
  alsoStdout: z.boolean().default(false),
  /** Extra fields on every line (e.g. `instanceId`), next to `pid` and `hostname`. @default {} */
  base: z.record(z.string(), z.unknown()).default({}),
  /** Clock for the `time` field, in epoch milliseconds. @default Date.now */
  now: z.custom<() => number>((value) => typeof value === 'function').optional(),
  /** Module name of lines logged on the root logger itself. @default 'daemon' */
  rootModule: z.string().min(1).default('daemon'),
  /**
   * How long {@link RootLogger.close} waits for lines still on their way (a stdout nobody
   * reads, a slow disk) before it closes anyway. @default 2000
   */
  closeTimeoutMs: z.number().int().nonnegative().default(2000),
});

/** Options of {@link createLogger} as accepted (defaults optional). */
export interface CreateLoggerOptions {
  /** Threshold of every module without an entry in `logLevels`. @default 'info' */
  level?: LogLevel;
  /** Per-module thresholds (`daemon.logLevels`). @default {} */
  logLevels?: Record<string, LogLevel>;
  /**
   * A writable stream, or rotating file options (the logger owns that file).
   * @default stdout
   */
  destination?: NodeJS.WritableStream | DestinationStream | RotatingFileOptions;
  /** With a file destination, copy every line to stdout as well. @default false */
  alsoStdout?: boolean;
  /** Extra fields on every line, next to `pid` and `hostname`. @default {} */
  base?: Record<string, unknown>;
  /** Clock for the `time` field, in epoch milliseconds. @default Date.now */
  now?: () => number;
  /** Module name of lines logged on the root logger itself. @default 'daemon' */
  rootModule?: string;
  /** How long {@link RootLogger.close} waits for pending lines before closing anyway. @default 2000 */
  closeTimeoutMs?: number;
}

/** The daemon's logger: an {@link AgentdLogger} (module `rootModule`) that also owns module levels. */
export interface RootLogger extends AgentdLogger {
  /**
   * The logger of module `name` (any name; created on first use and cached, so
   * every holder sees {@link RootLogger.setLevel} at once). Its lines carry `module: name`.
   */
  module(name: string): AgentdLogger;
  /**
   * Sets a module's threshold now, for the module and every child made from it,
   * until restart or {@link RootLogger.resetLevels} (`daemon.setLogLevel`).
   * @throws {LoggingError} `INVALID_LEVEL` for a level outside trace…fatal or an empty module name.
   */
  setLevel(module: string, level: LogLevel): void;
  /** The effective threshold of every module known so far (configured, overridden or used). */
  levels(): Record<string, LogLevel>;
  /** Threshold of modules with no configured or overridden level. */
  readonly defaultLevel: LogLevel;
  /**
   * Replaces the configured per-module levels (config hot-reload); `defaultLevel`
   * replaces the default when given. Overrides made with {@link RootLogger.setLevel}
   * stay, since the contract keeps them until restart.
   * @throws {LoggingError} `INVALID_LEVEL` for an invalid map or level.
   */
  resetLevels(logLevels: Record<string, LogLevel>, defaultLevel?: LogLevel): void;
  /** The rotating file the logger writes to, when it was given file options. */
  readonly file: RotatingFileStream | undefined;
  /** Flushes the destination and, for a file, waits for pending rotations. */
  flush(): Promise<void>;
  /**
   * Flushes (waiting at most `closeTimeoutMs`; lines still pending for stdout are then given
   * up) and closes an owned file; lines logged afterwards are dropped. Never rejects because
   * stdout is gone (EPIPE, closed socket).
   */
  close(): Promise<void>;
}

interface ModuleState {
  readonly name: string;
  label: LogLevel;
  value: number;
}

interface ModuleEntry {
  readonly state: ModuleState;
  readonly pino: PinoLogger<'audit'>;
}

type LogMethod = (...args: unknown[]) => void;

const FALLBACK_ERROR_KIND: ErrorKind = 'internal';
const FALLBACK_HINT = 'No hint was given by the caller; see msg and err';
const NO_TRACE: Readonly<Record<string, unknown>> = Object.freeze({});
// Stdout lines held while its reader is slow; beyond this they are dropped, never the daemon.
const STDOUT_MAX_PENDING_BYTES = 4 * 1024 * 1024;

/**
 * Fills `hint`/`errorKind` on warn, error and fatal lines from callers that
 * bypassed the types (plain pino-style calls from injected-logger users), so
 * every such line still carries them as the contract requires.
 */
function classify(args: unknown[]): unknown[] {
  const [first, ...rest] = args;
  if (typeof first === 'string') {
    return [{ errorKind: FALLBACK_ERROR_KIND, hint: FALLBACK_HINT }, first, ...rest];
  }
  if (first instanceof Error) {
    return [{ err: first, errorKind: FALLBACK_ERROR_KIND, hint: FALLBACK_HINT }, ...rest];
  }
  if (first === null || typeof first !== 'object') {
    return [{ errorKind: FALLBACK_ERROR_KIND, hint: FALLBACK_HINT }, ...rest];
  }
  const fields = first as Record<string, unknown>;
  if (typeof fields.hint === 'string' && typeof fields.errorKind === 'string') return args;
  return [
    {
      ...fields,
      hint: typeof fields.hint === 'string' ? fields.hint : FALLBACK_HINT,
      errorKind: typeof fields.errorKind === 'string' ? fields.errorKind : FALLBACK_ERROR_KIND,
    },
    ...rest,
  ];
}

class LevelRegistry {
  readonly #root: PinoLogger<'audit'>;
  readonly #entries = new Map<string, ModuleEntry>();
  #defaultLevel: LogLevel;
  #configured: Record<string, LogLevel>;
  readonly #overrides = new Map<string, LogLevel>();

  constructor(root: PinoLogger<'audit'>, defaultLevel: LogLevel, configured: Record<string, LogLevel>) {
    this.#root = root;
    this.#defaultLevel = defaultLevel;
    this.#configured = { ...configured };
  }

  get defaultLevel(): LogLevel {
    return this.#defaultLevel;
  }

  entry(name: string): ModuleEntry {
    let entry = this.#entries.get(name);
    if (entry === undefined) {
      const label = this.#effective(name);
      entry = {
        state: { name, label, value: LEVEL_VALUES[label] },
        pino: this.#root.child({ module: name }),
      };
      this.#entries.set(name, entry);
    }
    return entry;
  }

  setLevel(name: string, level: LogLevel): void {
    this.#overrides.set(name, level);
    this.#apply(this.entry(name).state);
  }

  reset(configured: Record<string, LogLevel>, defaultLevel: LogLevel): void {
    this.#configured = { ...configured };
    this.#defaultLevel = defaultLevel;
    for (const entry of this.#entries.values()) this.#apply(entry.state);
  }

  levels(): Record<string, LogLevel> {
    const names = new Set([
      ...Object.keys(this.#configured),
      ...this.#overrides.keys(),
      ...this.#entries.keys(),
    ]);
    const result: Record<string, LogLevel> = {};
    for (const name of [...names].sort()) result[name] = this.#effective(name);
    return result;
  }

  #effective(name: string): LogLevel {
    return (
      this.#overrides.get(name) ??
      (Object.hasOwn(this.#configured, name) ? this.#configured[name] : undefined) ??
      this.#defaultLevel
    );
  }

  #apply(state: ModuleState): void {
    state.label = this.#effective(state.name);
    state.value = LEVEL_VALUES[state.label];
  }
}

/**
 * A module's logger. Level checks happen here against the module's shared state
 * rather than in pino (whose instances all sit at `trace`), because pino copies a
 * level into each child at creation and a later change would not reach children
 * that other code already holds.
 */
class ModuleLogger implements AgentdLogger {
  readonly #registry: LevelRegistry;
  readonly #state: ModuleState;
  readonly #pino: PinoLogger<'audit'>;
  readonly #bindings: Record<string, unknown>;

  constructor(
    registry: LevelRegistry,
    state: ModuleState,
    instance: PinoLogger<'audit'>,
    bindings: Record<string, unknown>,
  ) {
    this.#registry = registry;
    this.#state = state;
    this.#pino = instance;
    this.#bindings = bindings;
  }

  get level(): string {
    return this.#state.label;
  }

  isLevelEnabled(level: LevelName): boolean {
    return LEVEL_VALUES[level] >= this.#state.value;
  }

  fatal(...args: unknown[]): void {
    if (this.#state.value <= LEVEL_VALUES.fatal) (this.#pino.fatal as LogMethod)(...classify(args));
  }

  error(...args: unknown[]): void {
    if (this.#state.value <= LEVEL_VALUES.error) (this.#pino.error as LogMethod)(...classify(args));
  }

  warn(...args: unknown[]): void {
    if (this.#state.value <= LEVEL_VALUES.warn) (this.#pino.warn as LogMethod)(...classify(args));
  }

  audit(...args: unknown[]): void {
    if (this.#state.value <= LEVEL_VALUES.audit) (this.#pino.audit as LogMethod)(...args);
  }

  info(...args: unknown[]): void {
    if (this.#state.value <= LEVEL_VALUES.info) (this.#pino.info as LogMethod)(...args);
  }

  debug(...args: unknown[]): void {
    if (this.#state.value <= LEVEL_VALUES.debug) (this.#pino.debug as LogMethod)(...args);
  }

  trace(...args: unknown[]): void {
    if (this.#state.value <= LEVEL_VALUES.trace) (this.#pino.trace as LogMethod)(...args);
  }

  child(bindings: LogFields): AgentdLogger {
    // pino runs formatters.bindings on the root's base only, so child bindings are redacted here.
    const { module, ...rest } = redactValue(bindings) as LogFields;
    if (typeof module === 'string' && module.length > 0 && module !== this.#state.name) {
      // Re-root under the other module so the line has one `module` key and that module's level.
      const entry = this.#registry.entry(module);
      const merged = { ...this.#bindings, ...rest };
      const instance = Object.keys(merged).length > 0 ? entry.pino.child(merged) : entry.pino;
      return new ModuleLogger(this.#registry, entry.state, instance, merged);
    }
    return new ModuleLogger(this.#registry, this.#state, this.#pino.child(rest), {
      ...this.#bindings,
      ...rest,
    });
  }
}

class Root extends ModuleLogger implements RootLogger {
  readonly #registry: LevelRegistry;
  readonly #modules = new Map<string, AgentdLogger>();
  readonly #pino: PinoLogger<'audit'>;
  readonly #stdout: FdStream | undefined;
  readonly #closeTimeoutMs: number;
  readonly file: RotatingFileStream | undefined;

  constructor(
    registry: LevelRegistry,
    rootModule: string,
    instance: PinoLogger<'audit'>,
    outputs: { file: RotatingFileStream | undefined; stdout: FdStream | undefined; closeTimeoutMs: number },
  ) {
    const entry = registry.entry(rootModule);
    super(registry, entry.state, entry.pino, {});
    this.#registry = registry;
    this.#pino = instance;
    this.file = outputs.file;
    this.#stdout = outputs.stdout;
    this.#closeTimeoutMs = outputs.closeTimeoutMs;
    this.#modules.set(rootModule, this);
  }

  get defaultLevel(): LogLevel {
    return this.#registry.defaultLevel;
  }

  module(name: string): AgentdLogger {
    let logger = this.#modules.get(name);
    if (logger === undefined) {
      if (typeof name !== 'string' || name.length === 0) {
        throw new LoggingError('INVALID_LEVEL', 'A module name must be a non-empty string', {
          data: { name },
        });
      }
      const entry = this.#registry.entry(name);
      logger = new ModuleLogger(this.#registry, entry.state, entry.pino, {});
      this.#modules.set(name, logger);
    }
    return logger;
  }

  setLevel(module: string, level: LogLevel): void {
    const parsed = logLevelSchema.safeParse(level);
    if (!parsed.success || !isModuleName(module)) {
      throw new LoggingError(
        'INVALID_LEVEL',
        `Invalid log level "${String(level)}" for module "${String(module)}": expected a module name (lower-case letters, digits, '.', '-', '_', starting with a letter; not a built-in name such as constructor) and one of ${logLevelSchema.options.join(', ')}`,
        { data: { module, level } },
      );
    }
    this.#registry.setLevel(module, parsed.data);
  }

  levels(): Record<string, LogLevel> {
    return this.#registry.levels();
  }

  resetLevels(logLevels: Record<string, LogLevel>, defaultLevel?: LogLevel): void {
    const levels = logLevelsSchema.safeParse(logLevels);
    const fallback = logLevelSchema.optional().safeParse(defaultLevel);
    if (!levels.success || !fallback.success) {
      throw new LoggingError('INVALID_LEVEL', 'Invalid per-module log levels', {
        cause: levels.error ?? fallback.error,
        data: { logLevels, defaultLevel },
      });
    }
    this.#registry.reset(levels.data, fallback.data ?? this.#registry.defaultLevel);
  }

  async flush(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.#pino.flush((error) => (error ? reject(error) : resolve()));
    });
    await Promise.all([this.file?.whenIdle(), this.#stdout?.flush()]);
  }

  async close(): Promise<void> {
    // Bounded: the last lines must not keep a stopping daemon alive (a pipe nobody reads).
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.#closeTimeoutMs);
    });
    await Promise.race([this.flush().catch(() => undefined), timeout]);
    clearTimeout(timer);
    await this.file?.close();
  }
}

/**
 * Creates the daemon's root logger: pino with level `audit` = 35, `errorKey`
 * `err` (pino's err serializer, redacted), `messageKey` `msg`, numeric `level`,
 * epoch-millisecond `time`, `pid` and `hostname`; redaction of
 * {@link REDACTED_FIELDS}; the {@link runWithTrace} context mixed into every
 * line; and per-module thresholds. Only the daemon calls this; packages get
 * `root.module(name)` (or a child of it) injected.
 * @throws {LoggingError} `INVALID_OPTIONS` for bad options, `FILE_OPEN_FAILED` if the file cannot be opened.
 */
export function createLogger(options: CreateLoggerOptions = {}): RootLogger {
  const parsed = createLoggerOptionsSchema.safeParse(options);
  if (!parsed.success) {
    throw new LoggingError('INVALID_OPTIONS', `Invalid logger options: ${parsed.error.message}`, {
      cause: parsed.error,
    });
  }
  const settings = parsed.data;
  let file: RotatingFileStream | undefined;
  let stdout: FdStream | undefined;
  let stream: DestinationStream;
  const destination = settings.destination;
  if (destination === undefined) {
    stdout = new FdStream({ fd: 1, maxPendingBytes: STDOUT_MAX_PENDING_BYTES });
    stream = stdout;
  } else if ('filePath' in destination && typeof (destination as { write?: unknown }).write !== 'function') {
    file = new RotatingFileStream(destination as RotatingFileOptions);
    stream = file;
  } else {
    stream = destination as DestinationStream;
  }
  if (settings.alsoStdout && destination !== undefined) {
    stdout = new FdStream({ fd: 1, maxPendingBytes: STDOUT_MAX_PENDING_BYTES });
    stream = pino.multistream(
      [
        { stream, level: 'trace' },
        { stream: stdout, level: 'trace' },
      ],
      { levels: { ...LEVEL_VALUES } },
    );
  }

  const now = settings.now;
  const instance = pino<'audit'>(
    {
      // Every pino instance stays at trace; ModuleLogger does the filtering.
      level: 'trace',
      customLevels: { audit: LEVEL_VALUES.audit },
      errorKey: 'err',
      messageKey: 'msg',
      serializers: { err: serializeError },
      base: { pid: process.pid, hostname: hostname(), ...settings.base },
      timestamp: now ? () => `,"time":${Math.trunc(now())}` : pino.stdTimeFunctions.epochTime,
      mixin: () => currentTrace() ?? NO_TRACE,
      mixinMergeStrategy: (fields, trace) => (trace === NO_TRACE ? fields : { ...trace, ...fields }),
      formatters: {
        log: (line) => redactLine(line, 'err'),
        bindings: (bindings) => redactValue(bindings) as Record<string, unknown>,
      },
    },
    stream,
  );
  const registry = new LevelRegistry(instance, settings.level, settings.logLevels);
  return new Root(registry, settings.rootModule, instance, {
    file,
    stdout,
    closeTimeoutMs: settings.closeTimeoutMs,
  });
}

/**
 * A module name a caller may set a level for: the shape of agentd's own module names, and
 * never a name an object inherits (`constructor`), since names key the level maps.
 */
export function isModuleName(module: unknown): module is string {
  return typeof module === 'string' && /^[a-z][a-z0-9._-]{0,63}$/.test(module) && !isUnsafeKey(module);
}
