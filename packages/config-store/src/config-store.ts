import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { type Document, stringify as stringifyYaml, parseDocument } from 'yaml';
import { z } from 'zod';
import { type ConfigIssue, ConfigStoreError } from './errors.js';
import { redactConfig, redactConfigText } from './redaction.js';
import { writeFileAtomic } from './internal/atomic-write.js';
import { ConfigGit, type CountObjects } from './internal/git.js';
import { Mutex } from './internal/mutex.js';
import {
  changedPaths,
  deepClone,
  deepEqual,
  getAtPath,
  isPlainObject,
  mergePatch,
  nestAtPath,
} from './internal/values.js';
import { parseYaml, syncDocument } from './internal/yaml-document.js';

/** One top-level config section, contributed by a package. */
export interface ConfigSectionDefinition<Schema extends z.ZodType = z.ZodType> {
  /** zod schema of the section; it must accept `{}` (every field defaulted or optional). */
  schema: Schema;
  /**
   * Dot paths inside the section whose change only takes effect after a
   * restart (`['host', 'port']`), or `['*']` when any change of the section does.
   * Changes elsewhere are hot: listeners registered with `onChange` apply them.
   * @default []
   */
  restartRequired?: readonly string[];
}

/**
 * How a warning or error is classified in the log. The contract's closed list;
 * declared here rather than imported so the package stays free of @agentd/logging.
 */
export type ErrorKind =
  | 'config'
  | 'network'
  | 'auth'
  | 'validation'
  | 'timeout'
  | 'resource'
  | 'dependency'
  | 'internal'
  | 'platform';

/**
 * Fields of a warn or error line. The contract demands an operator `hint` and an
 * `errorKind` on every such line, and the error itself under `err` (never `error`),
 * so the type refuses lines that lack them.
 */
export type ProblemFields = { hint: string; errorKind: ErrorKind; err?: unknown } & Record<
  string,
  unknown
> & {
    /** Refused: the contract puts the error under `err`. */
    error?: never;
  };

/** Pino-compatible logger subset; the store logs listener failures and recorded hand edits. */
export interface ConfigStoreLogger {
  debug(object: Record<string, unknown>, message?: string): void;
  info(object: Record<string, unknown>, message?: string): void;
  /** Something degraded but the store went on; `hint` and `errorKind` are required. */
  warn(object: ProblemFields, message?: string): void;
  /** An operation failed; `hint` and `errorKind` are required. */
  error(object: ProblemFields, message?: string): void;
}

/** Name and email recorded as author and committer of config commits. */
export interface ConfigCommitAuthor {
  /** @default 'agentd' */
  name: string;
  /** @default 'agentd@localhost' */
  email: string;
}

/** Options of {@link createConfigStore}. */
export interface ConfigStoreOptions<Sections extends Record<string, ConfigSectionDefinition>> {
  /** Data directory holding the config file and its git history; created when missing. */
  dataDir: string;
  /** Section name → definition. The full schema is a strict object of these sections. */
  sections: Sections;
  /**
   * Config file name inside `dataDir`.
   * @default 'config.yaml'
   */
  fileName?: string;
  /**
   * Logger for listener failures and recorded hand edits.
   * @default a logger that discards everything
   */
  logger?: ConfigStoreLogger;
  /**
   * Clock used for commit author dates (epoch milliseconds).
   * @default Date.now
   */
  now?: () => number;
  /**
   * Identity of config commits, independent of any git config on the machine.
   * @default { name: 'agentd', email: 'agentd@localhost' }
   */
  author?: ConfigCommitAuthor;
  /**
   * Comment written at the top of a freshly created config file (without `#`).
   * @default a short note on how the file is managed
   */
  header?: string;
}

/** The parsed config type for a set of section definitions. */
export type ConfigOf<Sections extends Record<string, ConfigSectionDefinition>> = {
  [Name in keyof Sections]: z.output<Sections[Name]['schema']>;
};

/** Result of every write (`patch`, `apply`, `set`, `rollback`). */
export interface ConfigWriteResult {
  ok: true;
  /** Commit holding the config after the write (the current HEAD when nothing changed). */
  sha: string;
  /** Sections whose effective (parsed, defaults applied) value changed. */
  changedSections: string[];
  /** Restart-only paths that changed: `section.path`, or `section` for a `'*'` section. */
  restartRequired: string[];
  /** True when hot (non-restart) changes were handed to at least one listener and none threw. */
  applied: boolean;
}

/** Result of {@link ConfigStore.set}. */
export interface ConfigSetResult extends ConfigWriteResult {
  /** Effective value at the key before the write; absent when there was none. */
  previous?: unknown;
}

/** Result of {@link ConfigStore.rollback}. */
export interface ConfigRollbackResult extends ConfigWriteResult {
  /** The full sha whose config was restored. */
  restoredFrom: string;
}

/** Result of {@link ConfigStore.schema}. */
export interface ConfigSchemaResult {
  /** JSON Schema (draft 2020-12) of what may be written: the whole config or one section. */
  schema: Record<string, unknown>;
  sections: string[];
  section?: string;
}

/** One commit of the config history. */
export interface ConfigHistoryEntry {
  sha: string;
  /** Author date, ISO 8601 in UTC. */
  date: string;
  message: string;
}

/** Object counts of the history repository, from `git count-objects -v`. */
export type ConfigGcStats = CountObjects;

/** Result of {@link ConfigStore.gc}. */
export interface ConfigGcResult {
  ok: true;
  before: ConfigGcStats;
  after: ConfigGcStats;
}

/** What a change listener learns besides the new config. */
export interface ConfigChangeEvent {
  changedSections: string[];
  restartRequired: string[];
  /** Commit that holds the change. */
  sha: string;
}

/** Receives the full new config (not redacted) after each committed change. */
export type ConfigChangeListener<Config> = (next: Config, event: ConfigChangeEvent) => void | Promise<void>;

/** Option bag of the writes that accept a commit message. */
export interface ConfigWriteOptions {
  /** Extra text appended as the commit body below the generated subject. */
  message?: string;
}

/** A git-backed, zod-validated YAML config file. Create with {@link createConfigStore}. */
export interface ConfigStore<Config extends object = Record<string, unknown>> {
  /** Section names in definition order. */
  readonly sections: string[];
  /** Absolute path of the data directory (the work tree of the history repository). */
  readonly dataDir: string;
  /** Absolute path of the config file. */
  readonly filePath: string;
  /**
   * First call: create the data directory, history and default config, or
   * validate the existing file. Later calls reload: re-read the file, validate
   * it, commit a hand edit and tell listeners. An invalid file throws
   * `CONFIG_INVALID` and leaves the running config as it was. Every other
   * method needs the first call to have finished.
   */
  load(): Promise<void>;
  /** Deep copy of the full parsed config, credentials included: for wiring, never for clients. */
  current(): Config;
  /** Full config redacted, with the section names. */
  read(): { config: Record<string, unknown>; sections: string[] };
  /** One section, redacted. */
  read(section: string): unknown;
  /** One section redacted when `section` is given, else the full config redacted with the section names. */
  read(section?: string): unknown;
  /** The full config, redacted. */
  get(): Record<string, unknown>;
  /** One section as stored, credentials included. */
  get(section: string): unknown;
  /** One section unredacted when `section` is given, else the full config redacted. */
  get(section?: string): unknown;
  /** JSON Schema of the whole config or one section. */
  schema(section?: string): ConfigSchemaResult;
  /** Deep-merge a patch, validate, persist and commit. */
  patch(patch: unknown, options?: ConfigWriteOptions): Promise<ConfigWriteResult>;
  /** Replace the whole config, validate, persist and commit. */
  apply(config: unknown, options?: ConfigWriteOptions): Promise<ConfigWriteResult>;
  /** Patch one key (a dot path inside the section), returning the previous effective value. */
  set(section: string, key: string, value: unknown): Promise<ConfigSetResult>;
  /** Unified diff of the config file between `sha` and now, or of the last change. */
  diff(sha?: string): Promise<{ diff: string }>;
  /** Commits of the config file, newest first. */
  history(limit?: number): Promise<{ entries: ConfigHistoryEntry[] }>;
  /** Restore the config file of an earlier commit as a new commit. */
  rollback(sha: string): Promise<ConfigRollbackResult>;
  /** Compact the history repository. */
  gc(): Promise<ConfigGcResult>;
  /** Register a change listener; returns a function that removes it. */
  onChange(listener: ConfigChangeListener<Config>): () => void;
}

const silentLogger: ConfigStoreLogger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

const defaultHeader = [
  ' agentd configuration.',
  ' Changes made through config.patch / config.apply / config.set / config.rollback are',
  ' validated and committed to the git history in this directory. Edits made by hand',
  ' while the daemon is stopped are validated and committed at the next start.',
  ' Put credentials in the secrets store and reference them as ${secret:NAME}.',
].join('\n');

const sectionNamePattern = /^[A-Za-z_][A-Za-z0-9_-]*$/;
const dotPathPattern = /^[^.]+(\.[^.]+)*$/;
const commitReferencePattern = /^(?:[0-9a-fA-F]{4,64}|HEAD(?:~\d{1,6}|\^{1,6})?)$/;

const optionsSchema = z.object({
  dataDir: z.string().min(1),
  sections: z
    .record(
      z.string().regex(sectionNamePattern, 'Section names are identifiers (letters, digits, _ and -)'),
      z.object({
        schema: z.custom<z.ZodType>(
          (value) =>
            typeof value === 'object' &&
            value !== null &&
            '_zod' in value &&
            typeof (value as { safeParse?: unknown }).safeParse === 'function',
          'Expected a zod v4 schema',
        ),
        restartRequired: z
          .array(z.union([z.literal('*'), z.string().regex(dotPathPattern, 'Expected a dot path')]))
          .optional(),
      }),
    )
    .refine((sections) => Object.keys(sections).length > 0, 'At least one section is required'),
  fileName: z
    .string()
    .regex(/^[^/\\]+$/, 'A file name, not a path')
    .refine((name) => name !== '.gitignore' && !name.startsWith('.git'), 'Reserved for git')
    .default('config.yaml'),
  logger: z
    .custom<ConfigStoreLogger>(
      (value) =>
        typeof value === 'object' &&
        value !== null &&
        ['debug', 'info', 'warn', 'error'].every(
          (level) => typeof (value as Record<string, unknown>)[level] === 'function',
        ),
      'Expected a logger with debug, info, warn and error',
    )
    .default(silentLogger),
  now: z
    .custom<() => number>((value) => typeof value === 'function', 'Expected a function')
    .default(() => Date.now),
  author: z
    .object({ name: z.string().min(1), email: z.string().min(1) })
    .default({ name: 'agentd', email: 'agentd@localhost' }),
  header: z.string().default(defaultHeader),
});

/** Convert zod issues to the package's issue shape. */
function toIssues(issues: readonly z.core.$ZodIssue[]): ConfigIssue[] {
  return issues.map((issue) => {
    const path = issue.path.map((segment) => (typeof segment === 'number' ? segment : String(segment)));
    let message = issue.message;
    if (issue.code === 'unrecognized_keys') message = `${message}: ${issue.keys.join(', ')}`;
    return { path, pathText: path.join('.'), message, code: issue.code };
  });
}

function describeIssues(issues: readonly ConfigIssue[]): string {
  return issues.map((issue) => `${issue.pathText || '<root>'}: ${issue.message}`).join('; ');
}

interface Snapshot {
  /** Exact bytes of the file. */
  text: string;
  /** YAML document, kept so later writes preserve comments. */
  document: Document;
  /** Plain value of the file (what a person wrote, defaults not applied). */
  raw: Record<string, unknown>;
  /** Validated config with defaults applied. */
  config: Record<string, unknown>;
}

interface Outcome {
  result: ConfigWriteResult;
  next: Record<string, unknown>;
  hot: boolean;
}

/**
 * Create a config store over `<dataDir>/<fileName>` with its history in a git
 * repository whose work tree is `dataDir` (see the README for the layout).
 * Nothing touches the disk until {@link ConfigStore.load}.
 *
 * @throws ConfigStoreError `INVALID_OPTIONS` when options do not validate or a
 * section schema does not accept `{}`.
 */
export function createConfigStore<Sections extends Record<string, ConfigSectionDefinition>>(
  options: ConfigStoreOptions<Sections>,
): ConfigStore<ConfigOf<Sections>> {
  const parsedOptions = optionsSchema.safeParse(options);
  if (!parsedOptions.success) {
    const issues = toIssues(parsedOptions.error.issues);
    throw new ConfigStoreError('INVALID_OPTIONS', `Invalid config store options: ${describeIssues(issues)}`, {
      data: { issues },
    });
  }
  const settings = parsedOptions.data;
  const sectionNames = Object.keys(settings.sections);

  const shape: Record<string, z.ZodType> = {};
  for (const name of sectionNames) {
    // prefault (not default) so `{}` goes through the section schema and
    // picks up every nested default.
    const sectionSchema = settings.sections[name]!.schema.prefault({} as never);
    const check = sectionSchema.safeParse(undefined);
    if (!check.success) {
      const issues = toIssues(check.error.issues);
      throw new ConfigStoreError(
        'INVALID_OPTIONS',
        `Section "${name}" must accept {} to provide defaults: ${describeIssues(issues)}`,
        { data: { section: name, issues } },
      );
    }
    shape[name] = sectionSchema;
  }
  const fullSchema = z.strictObject(shape);
  const restartPatterns = new Map(
    sectionNames.map((name) => [name, settings.sections[name]!.restartRequired ?? []] as const),
  );

  const dataDir = resolve(settings.dataDir);
  const filePath = join(dataDir, settings.fileName);
  const logger = settings.logger;
  const writeLock = new Mutex();
  const listeners = new Set<ConfigChangeListener<ConfigOf<Sections>>>();
  let notifications: Promise<unknown> = Promise.resolve();
  // Marks code running inside a listener: a write it awaits must notify at
  // once instead of queueing behind the listener that is waiting for it.
  const listenerContext = new AsyncLocalStorage<true>();
  let git: ConfigGit | undefined;
  let snapshot: Snapshot | undefined;
  let schemaCache: Record<string, unknown> | undefined;
  const sectionSchemaCache = new Map<string, Record<string, unknown>>();

  const validate = (raw: unknown): Record<string, unknown> => {
    const result = fullSchema.safeParse(raw);
    if (result.success) return result.data as Record<string, unknown>;
    const issues = toIssues(result.error.issues);
    throw new ConfigStoreError('VALIDATION', `Invalid config: ${describeIssues(issues)}`, {
      data: { issues },
    });
  };

  const loaded = (): { git: ConfigGit; state: Snapshot } => {
    if (!git || !snapshot)
      throw new ConfigStoreError('NOT_LOADED', 'Config store used before load() finished');
    return { git, state: snapshot };
  };

  const requireSection = (section: string): void => {
    if (!Object.hasOwn(shape, section)) {
      throw new ConfigStoreError('SECTION_NOT_FOUND', `Config section not found: ${section}`, {
        data: { section, sections: sectionNames },
      });
    }
  };

  const requireCommit = async (repository: ConfigGit, reference: string): Promise<string> => {
    const sha = commitReferencePattern.test(reference)
      ? await repository.resolveCommit(reference)
      : undefined;
    if (!sha)
      throw new ConfigStoreError('NOT_FOUND', `Commit not found: ${reference}`, { data: { sha: reference } });
    return sha;
  };

  /** Section-relative restart paths among the changes, and whether any change is hot. */
  const classify = (
    before: Record<string, unknown>,
    after: Record<string, unknown>,
  ): { changedSections: string[]; restartRequired: string[]; hot: boolean } => {
    const changedSections: string[] = [];
    const restart = new Set<string>();
    let hot = false;
    for (const name of sectionNames) {
      const paths = changedPaths(before[name], after[name]);
      if (paths.length === 0) continue;
      changedSections.push(name);
      const patterns = restartPatterns.get(name) ?? [];
      for (const path of paths) {
        let needsRestart = false;
        for (const pattern of patterns) {
          if (pattern === '*') {
            restart.add(name);
            needsRestart = true;
            continue;
          }
          const patternPath = pattern.split('.');
          const overlap = patternPath.length <= path.length ? patternPath : path;
          const longer = patternPath.length <= path.length ? path : patternPath;
          if (overlap.every((segment, index) => longer[index] === segment)) {
            restart.add(`${name}.${pattern}`);
            needsRestart = true;
          }
        }
        if (!needsRestart) hot = true;
      }
    }
    return { changedSections, restartRequired: [...restart], hot };
  };

  const snapshotFromText = (
    text: string,
    errorCode: 'CONFIG_INVALID' | 'VALIDATION',
    origin: string,
  ): Snapshot => {
    const parsed = parseYaml(text);
    if (parsed.errors.length > 0) {
      const issues: ConfigIssue[] = parsed.errors.map((error) => ({
        path: [],
        pathText: '',
        message: `YAML syntax: ${error.message}`,
      }));
      throw new ConfigStoreError(errorCode, `${origin} is not valid YAML: ${describeIssues(issues)}`, {
        data: { issues },
      });
    }
    if (!isPlainObject(parsed.value)) {
      const issues: ConfigIssue[] = [
        { path: [], pathText: '', message: 'The config must be a mapping of sections' },
      ];
      throw new ConfigStoreError(errorCode, `${origin} is not a mapping of sections`, { data: { issues } });
    }
    try {
      return { text, document: parsed.document, raw: parsed.value, config: validate(parsed.value) };
    } catch (error) {
      if (error instanceof ConfigStoreError && error.code === 'VALIDATION' && errorCode !== 'VALIDATION') {
        const issues = (error.data?.issues ?? []) as ConfigIssue[];
        throw new ConfigStoreError(errorCode, `${origin} is invalid: ${describeIssues(issues)}`, {
          data: { issues, file: filePath },
        });
      }
      throw error;
    }
  };

  const snapshotFromRaw = (current: Snapshot, raw: unknown): Snapshot => {
    if (!isPlainObject(raw)) {
      const issues: ConfigIssue[] = [{ path: [], pathText: '', message: 'Expected an object of sections' }];
      throw new ConfigStoreError('VALIDATION', 'Invalid config: expected an object of sections', {
        data: { issues },
      });
    }
    const config = validate(raw);
    const document = current.document.clone();
    syncDocument(document, raw);
    return { text: document.toString(), document, raw: deepClone(raw), config };
  };

  /** Write, commit and publish a prepared snapshot; must run inside the write lock. */
  const persist = async (
    repository: ConfigGit,
    current: Snapshot,
    next: Snapshot,
    subject: (touched: string[]) => string,
    body?: string,
  ): Promise<Outcome> => {
    const currentSha = (await repository.head()) ?? '';
    if (next.text === current.text) {
      return {
        result: { ok: true, sha: currentSha, changedSections: [], restartRequired: [], applied: false },
        next: current.config,
        hot: false,
      };
    }
    const touched = sectionNames.filter(
      (name) =>
        !deepEqual(current.raw[name], next.raw[name]) || !deepEqual(current.config[name], next.config[name]),
    );
    const message = body ? `${subject(touched)}\n\n${body}` : subject(touched);
    try {
      await writeFileAtomic(filePath, next.text);
    } catch (error) {
      throw new ConfigStoreError('IO_FAILED', `Could not write ${filePath}`, { cause: error });
    }
    let sha: string;
    try {
      sha = await repository.commit(message, settings.now());
    } catch (error) {
      // Keep the file and the history in step: a change that could not be
      // committed is not kept.
      await repository.unstage();
      await writeFileAtomic(filePath, current.text).catch((restoreError: unknown) =>
        logger.error(
          {
            err: restoreError,
            file: filePath,
            errorKind: 'resource',
            hint: 'the file now holds a change git did not record; check disk space and permissions of the data directory, then load the store again',
          },
          'config: could not restore file after failed commit',
        ),
      );
      throw error;
    }
    snapshot = next;
    const classified = classify(current.config, next.config);
    return {
      result: {
        ok: true,
        sha,
        changedSections: classified.changedSections,
        restartRequired: classified.restartRequired,
        applied: false,
      },
      next: next.config,
      hot: classified.hot,
    };
  };

  /** Tell listeners, one change at a time in commit order; reports whether all succeeded. */
  const notify = (outcome: Outcome): Promise<boolean> => {
    if (outcome.result.changedSections.length === 0) return Promise.resolve(false);
    const event: ConfigChangeEvent = {
      changedSections: outcome.result.changedSections,
      restartRequired: outcome.result.restartRequired,
      sha: outcome.result.sha,
    };
    const deliver = async (): Promise<boolean> => {
      let allSucceeded = listeners.size > 0;
      for (const listener of [...listeners]) {
        try {
          await listenerContext.run(true, () =>
            listener(deepClone(outcome.next) as ConfigOf<Sections>, event),
          );
        } catch (error) {
          allSucceeded = false;
          logger.error(
            {
              err: error,
              changedSections: event.changedSections,
              sha: event.sha,
              errorKind: 'internal',
              hint: 'the change is committed but a listener did not apply it; restart the daemon to apply it',
            },
            'config: change listener failed',
          );
        }
      }
      return allSucceeded;
    };
    if (listenerContext.getStore()) return deliver();
    const run = notifications.then(deliver);
    notifications = run.catch(() => undefined);
    return run;
  };

  /** Serialise one write, then notify outside the lock so a listener may start another write. */
  const write = async (task: (repository: ConfigGit, current: Snapshot) => Promise<Outcome>) => {
    const outcome = await writeLock.run(() => {
      const { git: repository, state } = loaded();
      return task(repository, state);
    });
    const listenersSucceeded = await notify(outcome);
    return { ...outcome.result, applied: outcome.hot && listenersSucceeded };
  };

  const sectionList = (touched: string[]): string => (touched.length > 0 ? touched.join(', ') : 'formatting');

  const readConfigFile = async (): Promise<string | undefined> => {
    try {
      return await readFile(filePath, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new ConfigStoreError('IO_FAILED', `Could not read ${filePath}`, { cause: error });
    }
  };

  /** Commit the file on disk when it differs from HEAD (a hand edit, or a first import). */
  const recordOutsideEdit = async (repository: ConfigGit): Promise<string | undefined> => {
    if (!(await repository.isDirty())) return undefined;
    const hadHistory = (await repository.head()) !== undefined;
    const message = hadHistory ? 'config: record edit made outside agentd' : 'config: initial import';
    const sha = await repository.commit(message, settings.now());
    logger.info({ file: filePath, sha }, message);
    return sha;
  };

  const initialLoad = async (): Promise<void> => {
    try {
      await mkdir(dataDir, { recursive: true });
    } catch (error) {
      throw new ConfigStoreError('IO_FAILED', `Could not create data directory ${dataDir}`, { cause: error });
    }
    const repository = new ConfigGit(dataDir, settings.fileName, settings.author);
    if (!(await exists(join(dataDir, '.git')))) await repository.init();
    const ignorePath = join(dataDir, '.gitignore');
    if (!(await exists(ignorePath))) {
      // The data dir also holds databases, logs and workspaces: ignore
      // everything at the top level except the config file (this .gitignore
      // included, so the history holds exactly one file).
      await writeFile(
        ignorePath,
        `# Written by @agentd/config-store: only the config file is versioned here.\n/*\n!/${settings.fileName}\n`,
      );
    }

    const text = await readConfigFile();
    if (text === undefined) {
      const defaults = validate({});
      const document = parseDocument(stringifyYaml(defaults));
      document.commentBefore = settings.header;
      const initial: Snapshot = {
        text: document.toString(),
        document,
        raw: deepClone(defaults),
        config: defaults,
      };
      try {
        await writeFileAtomic(filePath, initial.text);
      } catch (error) {
        throw new ConfigStoreError('IO_FAILED', `Could not write ${filePath}`, { cause: error });
      }
      await repository.commit('config: initial defaults', settings.now());
      git = repository;
      snapshot = initial;
      return;
    }

    const existing = snapshotFromText(text, 'CONFIG_INVALID', filePath);
    await recordOutsideEdit(repository);
    git = repository;
    snapshot = existing;
  };

  /** Re-read the file of a loaded store; runs inside the write lock. */
  const reload = async (repository: ConfigGit, current: Snapshot): Promise<Outcome | undefined> => {
    const text = await readConfigFile();
    if (text === undefined) {
      // A deleted file is put back rather than reset to defaults: losing every
      // setting because a file went missing would be worse than keeping them.
      logger.warn(
        {
          file: filePath,
          errorKind: 'config',
          hint: 'the config file was deleted or moved; it was written back from the running config, edit it rather than removing it',
        },
        'config: file missing on reload, rewriting the running config',
      );
      await writeFileAtomic(filePath, current.text);
      return undefined;
    }
    const next = snapshotFromText(text, 'CONFIG_INVALID', filePath);
    const sha = (await recordOutsideEdit(repository)) ?? (await repository.head()) ?? '';
    snapshot = next;
    const classified = classify(current.config, next.config);
    return {
      result: {
        ok: true,
        sha,
        changedSections: classified.changedSections,
        restartRequired: classified.restartRequired,
        applied: false,
      },
      next: next.config,
      hot: classified.hot,
    };
  };

  function read(): { config: Record<string, unknown>; sections: string[] };
  function read(section: string): unknown;
  function read(section?: string): unknown;
  function read(section?: string): unknown {
    const { state } = loaded();
    if (section === undefined) return { config: redactConfig(state.config), sections: [...sectionNames] };
    requireSection(section);
    return redactConfig(state.config[section]);
  }

  function get(): Record<string, unknown>;
  function get(section: string): unknown;
  function get(section?: string): unknown;
  function get(section?: string): unknown {
    const { state } = loaded();
    if (section === undefined) return redactConfig(state.config);
    requireSection(section);
    return deepClone(state.config[section]);
  }

  const store: ConfigStore<ConfigOf<Sections>> = {
    sections: [...sectionNames],
    dataDir,
    filePath,

    async load() {
      const outcome = await writeLock.run(async () => {
        if (!git || !snapshot) {
          await initialLoad();
          return undefined;
        }
        return reload(git, snapshot);
      });
      if (outcome) await notify(outcome);
    },

    current() {
      return deepClone(loaded().state.config) as ConfigOf<Sections>;
    },

    read,
    get,

    schema(section) {
      if (section === undefined) {
        schemaCache ??= z.toJSONSchema(fullSchema, { io: 'input', unrepresentable: 'any' }) as Record<
          string,
          unknown
        >;
        return { schema: schemaCache, sections: [...sectionNames] };
      }
      requireSection(section);
      let sectionSchema = sectionSchemaCache.get(section);
      if (!sectionSchema) {
        sectionSchema = z.toJSONSchema(shape[section]!, { io: 'input', unrepresentable: 'any' }) as Record<
          string,
          unknown
        >;
        sectionSchemaCache.set(section, sectionSchema);
      }
      return { schema: sectionSchema, sections: [...sectionNames], section };
    },

    patch(patch, options = {}) {
      return write(async (repository, current) => {
        if (!isPlainObject(patch)) {
          const issues: ConfigIssue[] = [
            { path: [], pathText: '', message: 'A patch must be an object of sections' },
          ];
          throw new ConfigStoreError('VALIDATION', 'Invalid patch: expected an object', { data: { issues } });
        }
        const next = snapshotFromRaw(current, mergePatch(current.raw, patch));
        return persist(
          repository,
          current,
          next,
          (touched) => `config: update ${sectionList(touched)}`,
          options.message,
        );
      });
    },

    apply(config, options = {}) {
      return write(async (repository, current) => {
        const next = snapshotFromRaw(current, config);
        return persist(
          repository,
          current,
          next,
          (touched) => `config: apply ${sectionList(touched)}`,
          options.message,
        );
      });
    },

    async set(section, key, value) {
      requireSection(section);
      const path = key.split('.');
      if (key === '' || path.some((segment) => segment === '')) {
        const issues: ConfigIssue[] = [
          { path: [section], pathText: section, message: `Invalid key: ${key}` },
        ];
        throw new ConfigStoreError('VALIDATION', `Invalid key: ${JSON.stringify(key)}`, { data: { issues } });
      }
      let previous: unknown;
      const result = await write(async (repository, current) => {
        previous = deepClone(getAtPath(current.config[section], path));
        const next = snapshotFromRaw(
          current,
          mergePatch(current.raw, { [section]: nestAtPath(path, value) }),
        );
        return persist(
          repository,
          current,
          next,
          (touched) => `config: set ${section}.${key} (${sectionList(touched)})`,
        );
      });
      return previous === undefined ? result : { ...result, previous };
    },

    async diff(sha) {
      const { git: repository } = loaded();
      // Diffs are redacted like config.read: git history keeps hashes and hand-written values.
      if (sha === undefined) return { diff: redactConfigText(await repository.lastChange()) };
      const resolved = await requireCommit(repository, sha);
      return { diff: redactConfigText(await repository.diffSince(resolved)) };
    },

    async history(limit = 20) {
      if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) {
        throw new ConfigStoreError('VALIDATION', 'limit must be an integer from 1 to 10000', {
          data: {
            issues: [{ path: ['limit'], pathText: 'limit', message: 'Expected an integer from 1 to 10000' }],
          },
        });
      }
      const { git: repository } = loaded();
      return { entries: await repository.log(limit) };
    },

    async rollback(sha) {
      let restoredFrom = '';
      const result = await write(async (repository, current) => {
        restoredFrom = await requireCommit(repository, sha);
        const text = await repository.showFile(restoredFrom);
        if (text === undefined) {
          throw new ConfigStoreError('NOT_FOUND', `Commit ${sha} has no ${settings.fileName}`, {
            data: { sha },
          });
        }
        const next = snapshotFromText(
          text,
          'VALIDATION',
          `${settings.fileName} at ${restoredFrom.slice(0, 12)}`,
        );
        return persist(
          repository,
          current,
          next,
          (touched) =>
            `config: rollback to ${restoredFrom.slice(0, 12)}${touched.length > 0 ? ` (${touched.join(', ')})` : ''}`,
        );
      });
      return { ...result, restoredFrom };
    },

    async gc() {
      return writeLock.run(async () => {
        const { git: repository } = loaded();
        const before = await repository.countObjects();
        await repository.collectGarbage();
        const after = await repository.countObjects();
        return { ok: true as const, before, after };
      });
    },

    onChange(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
  };
  return store;
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
