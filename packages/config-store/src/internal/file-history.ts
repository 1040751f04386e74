import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseDocument, stringify as stringifyYaml } from 'yaml';
import { ConfigStoreError } from '../errors.js';
import { writeFileAtomic } from './atomic-write.js';
import { classify, type ConfigContext, type Outcome, type Snapshot, validate } from './config-context.js';
import { ConfigGit } from './git.js';
import { snapshotFromText } from './snapshot.js';
import { deepClone, deepEqual } from './values.js';

// The file and its history: commit a prepared snapshot, first load, reload after a hand edit.

/** Write, commit and publish a prepared snapshot; must run inside the write lock. */
export async function persist(
  ctx: ConfigContext,
  repository: ConfigGit,
  current: Snapshot,
  next: Snapshot,
  subject: (touched: string[]) => string,
  body?: string,
): Promise<Outcome> {
  const currentSha = (await repository.head()) ?? '';
  if (next.text === current.text) {
    return {
      result: { ok: true, sha: currentSha, changedSections: [], restartRequired: [], applied: false },
      next: current.config,
      hot: false,
    };
  }
  const touched = ctx.sectionNames.filter(
    (name) =>
      !deepEqual(current.raw[name], next.raw[name]) || !deepEqual(current.config[name], next.config[name]),
  );
  const message = body ? `${subject(touched)}\n\n${body}` : subject(touched);
  try {
    await writeFileAtomic(ctx.filePath, next.text);
  } catch (error) {
    throw new ConfigStoreError('IO_FAILED', `Could not write ${ctx.filePath}`, { cause: error });
  }
  let sha: string;
  try {
    sha = await repository.commit(message, ctx.settings.now());
  } catch (error) {
    // Keep the file and the history in step: a change that could not be
    // committed is not kept.
    await repository.unstage();
    await writeFileAtomic(ctx.filePath, current.text).catch((restoreError: unknown) =>
      ctx.logger.error(
        {
          err: restoreError,
          file: ctx.filePath,
          errorKind: 'resource',
          hint: 'the file now holds a change git did not record; check disk space and permissions of the data directory, then load the store again',
        },
        'config: could not restore file after failed commit',
      ),
    );
    throw error;
  }
  ctx.snapshot = next;
  return outcomeOf(ctx, sha, current, next);
}

/** The config file's text, or undefined when there is none. */
export async function readConfigFile(ctx: ConfigContext): Promise<string | undefined> {
  try {
    return await readFile(ctx.filePath, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ConfigStoreError('IO_FAILED', `Could not read ${ctx.filePath}`, { cause: error });
  }
}

/** Commit the file on disk when it differs from HEAD (a hand edit, or a first import). */
export async function recordOutsideEdit(
  ctx: ConfigContext,
  repository: ConfigGit,
): Promise<string | undefined> {
  if (!(await repository.isDirty())) return undefined;
  const hadHistory = (await repository.head()) !== undefined;
  const message = hadHistory ? 'config: record edit made outside agentd' : 'config: initial import';
  const sha = await repository.commit(message, ctx.settings.now());
  ctx.logger.info({ file: ctx.filePath, sha }, message);
  return sha;
}

/** Creates the data directory, the repository and (when missing) a file of defaults, or reads the file. */
export async function initialLoad(ctx: ConfigContext): Promise<void> {
  try {
    await mkdir(ctx.dataDir, { recursive: true });
  } catch (error) {
    throw new ConfigStoreError('IO_FAILED', `Could not create data directory ${ctx.dataDir}`, {
      cause: error,
    });
  }
  const repository = new ConfigGit(ctx.dataDir, ctx.settings.fileName, ctx.settings.author);
  const newRepository = !(await exists(join(ctx.dataDir, '.git')));
  if (newRepository) await repository.init();
  const ignorePath = join(ctx.dataDir, '.gitignore');
  if (!(await exists(ignorePath))) {
    // The data dir also holds databases, logs and workspaces: ignore
    // everything at the top level except the config file (this .gitignore
    // included, so the history holds exactly one file).
    await writeFile(
      ignorePath,
      `# Written by @agentd/config-store: only the config file is versioned here.\n/*\n!/${ctx.settings.fileName}\n`,
    );
  }

  const text = await readConfigFile(ctx);
  if (text === undefined) {
    const defaults = validate(ctx, {});
    const document = parseDocument(stringifyYaml(defaults));
    document.commentBefore = ctx.settings.header;
    const initial: Snapshot = {
      text: document.toString(),
      document,
      raw: deepClone(defaults),
      config: defaults,
    };
    try {
      await writeFileAtomic(ctx.filePath, initial.text);
    } catch (error) {
      throw new ConfigStoreError('IO_FAILED', `Could not write ${ctx.filePath}`, { cause: error });
    }
    await repository.commit('config: initial defaults', ctx.settings.now());
    ctx.git = repository;
    ctx.snapshot = initial;
    return;
  }

  const existing = snapshotFromText(ctx, text, 'CONFIG_INVALID', ctx.filePath);
  if (newRepository) {
    // A repository made just now has no history: the file is untracked, so asking git is moot.
    const sha = await repository.commit('config: initial import', ctx.settings.now());
    ctx.logger.info({ file: ctx.filePath, sha }, 'config: initial import');
  } else {
    await recordOutsideEdit(ctx, repository);
  }
  ctx.git = repository;
  ctx.snapshot = existing;
}

/** Re-read the file of a loaded store; runs inside the write lock. */
export async function reload(
  ctx: ConfigContext,
  repository: ConfigGit,
  current: Snapshot,
): Promise<Outcome | undefined> {
  const text = await readConfigFile(ctx);
  if (text === undefined) {
    // A deleted file is put back rather than reset to defaults: losing every
    // setting because a file went missing would be worse than keeping them.
    ctx.logger.warn(
      {
        file: ctx.filePath,
        errorKind: 'config',
        hint: 'the config file was deleted or moved; it was written back from the running config, edit it rather than removing it',
      },
      'config: file missing on reload, rewriting the running config',
    );
    await writeFileAtomic(ctx.filePath, current.text);
    return undefined;
  }
  const next = snapshotFromText(ctx, text, 'CONFIG_INVALID', ctx.filePath);
  const sha = (await recordOutsideEdit(ctx, repository)) ?? (await repository.head()) ?? '';
  ctx.snapshot = next;
  return outcomeOf(ctx, sha, current, next);
}

/** The committed change from `current` to `next`, classified. */
function outcomeOf(ctx: ConfigContext, sha: string, current: Snapshot, next: Snapshot): Outcome {
  const classified = classify(ctx, current.config, next.config);
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
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
