import type { Logger } from '@agentd/contracts';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { hasMethods } from '@agentd/input-guards';
import { z } from 'zod';
import { type ConfigIssue, ConfigStoreError } from './errors.js';
import {
  compileSections,
  type ConfigContext,
  describeIssues,
  loaded,
  type Outcome,
  requireCommit,
  requireSection,
  type Snapshot,
  toIssues,
} from './internal/config-context.js';
import { initialLoad, persist, reload } from './internal/file-history.js';
import type { ConfigGit, CountObjects } from './internal/git.js';
import { ChangeListeners } from './internal/listeners.js';
import { KeyedMutex } from '@agentd/async-control';
import { snapshotFromRaw, snapshotFromText } from './internal/snapshot.js';
import {
  assertSafeKeys,
  deepClone,
  getAtPath,
  isPlainObject,
  mergePatch,
  nestAtPath,
} from './internal/values.js';
import { redactConfig } from './redaction.js';
import { redactedDiff } from './internal/redacted-diff.js';

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
 * The store's logger: agentd's shared pino-compatible `Logger` from `@agentd/contracts`;
 * it logs listener failures and recorded hand edits.
 */
export type ConfigStoreLogger = Logger;

export type { ErrorKind, ProblemFields } from '@agentd/contracts';

/** Name and email recorded as author and committer of config commits. */
export interface ConfigCommitAuthor {
  /** @default 'agentd' */
  name: string;
  /** @default 'agentd@localhost' */
  email: string;
}

/** Options of {@link ConfigStore.rollback}. */
export interface ConfigRollbackOptions {
  /**
   * Judges the config the rollback would restore (as written in that commit, before
   * defaults); throwing refuses the rollback and nothing is written.
   */
  check?: ((config: Record<string, unknown>) => void | Promise<void>) | undefined;
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
  rollback(sha: string, options?: ConfigRollbackOptions): Promise<ConfigRollbackResult>;
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
      (value) => hasMethods(value, ['debug', 'info', 'warn', 'error']),
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
  const dataDir = resolve(settings.dataDir);
  const ctx: ConfigContext = {
    settings,
    ...compileSections(settings.sections),
    dataDir,
    filePath: join(dataDir, settings.fileName),
    logger: settings.logger,
    git: undefined,
    snapshot: undefined,
  };
  const { sectionNames, shape, fullSchema, filePath, logger } = ctx;
  // One lane: every write of the file waits for the one before it.
  const writeLock = new KeyedMutex();
  const WRITE = 'config.yaml';
  const listeners = new ChangeListeners<ConfigOf<Sections>>(logger);
  let schemaCache: Record<string, unknown> | undefined;
  const sectionSchemaCache = new Map<string, Record<string, unknown>>();

  /** Serialise one write, then notify outside the lock so a listener may start another write. */
  const write = async (task: (repository: ConfigGit, current: Snapshot) => Promise<Outcome>) => {
    const outcome = await writeLock.run(WRITE, () => {
      const { git: repository, state } = loaded(ctx);
      return task(repository, state);
    });
    const listenersSucceeded = await listeners.notify(outcome);
    return { ...outcome.result, applied: outcome.hot && listenersSucceeded };
  };

  const sectionList = (touched: string[]): string => (touched.length > 0 ? touched.join(', ') : 'formatting');
  /** The default commit message of a whole-config write: `config: <verb> <sections it changed>`. */
  const commitMessage =
    (verb: string) =>
    (touched: string[]): string =>
      `config: ${verb} ${sectionList(touched)}`;

  function read(): { config: Record<string, unknown>; sections: string[] };
  function read(section: string): unknown;
  function read(section?: string): unknown;
  function read(section?: string): unknown {
    const { state } = loaded(ctx);
    if (section === undefined) return { config: redactConfig(state.config), sections: [...sectionNames] };
    requireSection(ctx, section);
    return redactConfig(state.config[section]);
  }

  function get(): Record<string, unknown>;
  function get(section: string): unknown;
  function get(section?: string): unknown;
  function get(section?: string): unknown {
    const { state } = loaded(ctx);
    if (section === undefined) return redactConfig(state.config);
    requireSection(ctx, section);
    return deepClone(state.config[section]);
  }

  const store: ConfigStore<ConfigOf<Sections>> = {
    sections: [...sectionNames],
    dataDir,
    filePath,

    async load() {
      const outcome = await writeLock.run(WRITE, async () => {
        if (!ctx.git || !ctx.snapshot) {
          await initialLoad(ctx);
          return undefined;
        }
        return reload(ctx, ctx.git, ctx.snapshot);
      });
      if (outcome) await listeners.notify(outcome);
    },

    current() {
      return deepClone(loaded(ctx).state.config) as ConfigOf<Sections>;
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
      requireSection(ctx, section);
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
        assertSafeKeys(patch);
        const next = snapshotFromRaw(ctx, current, mergePatch(current.raw, patch));
        return persist(ctx, repository, current, next, commitMessage('update'), options.message);
      });
    },

    apply(config, options = {}) {
      return write(async (repository, current) => {
        assertSafeKeys(config);
        const next = snapshotFromRaw(ctx, current, config);
        return persist(ctx, repository, current, next, commitMessage('apply'), options.message);
      });
    },

    async set(section, key, value) {
      requireSection(ctx, section);
      const path = key.split('.');
      if (key === '' || path.some((segment) => segment === '')) {
        const issues: ConfigIssue[] = [
          { path: [section], pathText: section, message: `Invalid key: ${key}` },
        ];
        throw new ConfigStoreError('VALIDATION', `Invalid key: ${JSON.stringify(key)}`, { data: { issues } });
      }
      assertSafeKeys(value, [section, ...path]);
      let previous: unknown;
      const result = await write(async (repository, current) => {
        previous = deepClone(getAtPath(current.config[section], path));
        const next = snapshotFromRaw(
          ctx,
          current,
          mergePatch(current.raw, { [section]: nestAtPath(path, value) }),
        );
        return persist(
          ctx,
          repository,
          current,
          next,
          (touched) => `config: set ${section}.${key} (${sectionList(touched)})`,
        );
      });
      return previous === undefined ? result : { ...result, previous };
    },

    async diff(sha) {
      const { git: repository } = loaded(ctx);
      // Both revisions are redacted as whole trees, like config.read, before lines are compared:
      // git history keeps hashes and hand-written values.
      if (sha === undefined) {
        const headSha = await repository.head();
        const parent = headSha === undefined ? undefined : await repository.resolveCommit(`${headSha}^`);
        const before = parent === undefined ? undefined : await repository.showFile(parent);
        const after = headSha === undefined ? undefined : await repository.showFile(headSha);
        return { diff: redactedDiff(settings.fileName, before, after) };
      }
      const resolved = await requireCommit(repository, sha);
      const current = await readFile(filePath, 'utf8').catch(() => undefined);
      return { diff: redactedDiff(settings.fileName, await repository.showFile(resolved), current) };
    },

    async history(limit = 20) {
      if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) {
        throw new ConfigStoreError('VALIDATION', 'limit must be an integer from 1 to 10000', {
          data: {
            issues: [{ path: ['limit'], pathText: 'limit', message: 'Expected an integer from 1 to 10000' }],
          },
        });
      }
      const { git: repository } = loaded(ctx);
      return { entries: await repository.log(limit) };
    },

    async rollback(sha, options = {}) {
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
          ctx,
          text,
          'VALIDATION',
          `${settings.fileName} at ${restoredFrom.slice(0, 12)}`,
        );
        // The caller's policy sees what the rollback would restore, before anything is written.
        await options.check?.(next.raw as Record<string, unknown>);
        return persist(
          ctx,
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
      return writeLock.run(WRITE, async () => {
        const { git: repository } = loaded(ctx);
        const before = await repository.countObjects();
        await repository.collectGarbage();
        const after = await repository.countObjects();
        return { ok: true as const, before, after };
      });
    },

    onChange(listener) {
      return listeners.add(listener);
    },
  };
  return store;
}
