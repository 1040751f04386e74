import { join } from 'node:path';
import { type SimpleGit, simpleGit } from 'simple-git';
import { WorkspaceError } from '../errors.js';

/** One commit as `git.log` answers it. */
export interface CommitInfo {
  sha: string;
  author: string;
  date: string;
  message: string;
}

/** One changed path as `git.status` answers it (porcelain v1 letters; `?` untracked). */
export interface StatusEntry {
  path: string;
  /** Staged state: `M`, `A`, `D`, `R`, `?`, or ` ` when unchanged. */
  index: string;
  /** Working-tree state, same letters. */
  workingTree: string;
}

/** Settings of {@link WorkspaceGit}. */
export interface GitSettings {
  author: { name: string; email: string };
  timeoutMs: number;
}

/**
 * The git operations of one workspace. Every call names the repository with `--git-dir` and
 * `--work-tree`, so a workspace whose `.git` went missing can never fall through to a
 * repository above it (the data directory is itself the config history's repository).
 * Hooks, signing, external diff and text conversion are off and the identity is pinned, so
 * neither the user's git config nor a file in the workspace changes what a call does. Every
 * pathspec follows `--`.
 */
export class WorkspaceGit {
  private client: SimpleGit | undefined;
  private readonly location: string[];

  constructor(
    readonly root: string,
    private readonly settings: GitSettings,
  ) {
    this.location = [`--git-dir=${join(root, '.git')}`, `--work-tree=${root}`];
  }

  /** simple-git wants its directory to exist, so it is made at the first call (after init's mkdir). */
  private get git(): SimpleGit {
    const { root, settings } = this;
    this.client ??= simpleGit({
      baseDir: root,
      maxConcurrentProcesses: 2,
      trimmed: false,
      timeout: { block: settings.timeoutMs },
      // Both are set here, never from caller input: the repository location (above) and hooks
      // pointed at /dev/null (a workspace file can never become a hook that git runs).
      unsafe: { allowUnsafeConfigPaths: true, allowUnsafeHooksPath: true },
      config: [
        `user.name=${settings.author.name}`,
        `user.email=${settings.author.email}`,
        'commit.gpgSign=false',
        'init.defaultBranch=main',
        'color.ui=false',
        'core.autocrlf=false',
        'core.quotePath=false',
        'core.hooksPath=/dev/null',
        'core.sharedRepository=umask',
        'log.showSignature=false',
        'advice.detachedHead=false',
        `safe.directory=${root}`,
      ],
    });
    return this.client;
  }

  /** Runs git in this workspace; a failure becomes `GIT_FAILED` naming the subcommand. */
  async run(args: string[]): Promise<string> {
    try {
      return await this.git.raw([...this.location, ...args]);
    } catch (error) {
      throw new WorkspaceError('GIT_FAILED', `git ${args[0]} failed in the workspace`, { cause: error });
    }
  }

  async init(): Promise<void> {
    await this.run(['init', '--quiet']);
  }

  async head(): Promise<string | undefined> {
    try {
      return (
        (await this.git.raw([...this.location, 'rev-parse', '--verify', '--quiet', 'HEAD'])).trim() ||
        undefined
      );
    } catch {
      return undefined;
    }
  }

  async branch(): Promise<string | undefined> {
    try {
      return (
        (await this.git.raw([...this.location, 'symbolic-ref', '--short', '-q', 'HEAD'])).trim() || undefined
      );
    } catch {
      return undefined;
    }
  }

  /** The full sha of the commit `reference` names, or `undefined`. */
  async resolveCommit(reference: string): Promise<string | undefined> {
    try {
      const sha = await this.git.raw([
        ...this.location,
        'rev-parse',
        '--verify',
        '--quiet',
        '--end-of-options',
        `${reference}^{commit}`,
      ]);
      return sha.trim() || undefined;
    } catch {
      return undefined;
    }
  }

  async status(path = ''): Promise<StatusEntry[]> {
    const output = await this.run([
      'status',
      '--porcelain=v1',
      '-z',
      '--untracked-files=all',
      '--',
      pathspec(path),
    ]);
    const entries: StatusEntry[] = [];
    const records = output.split('\0');
    for (let index = 0; index < records.length; index++) {
      const record = records[index] as string;
      if (record.length < 4) continue;
      const entry = { index: record[0] as string, workingTree: record[1] as string, path: record.slice(3) };
      // A rename is followed by its source path as a record of its own.
      if (entry.index === 'R' || entry.index === 'C') index++;
      entries.push(entry);
    }
    return entries;
  }

  async log(limit: number): Promise<CommitInfo[]> {
    if ((await this.head()) === undefined) return [];
    const output = await this.run(['log', `--max-count=${limit}`, '--format=%H%x1f%an%x1f%aI%x1f%B%x1e']);
    return output
      .split('\x1e')
      .map((record) => record.trim())
      .filter((record) => record !== '')
      .map((record) => {
        const [sha = '', author = '', date = '', message = ''] = record.split('\x1f');
        return { sha, author, date: new Date(date).toISOString(), message: message.trim() };
      });
  }

  /** Working tree against HEAD, for tracked files; binary files appear as `Binary files … differ`. */
  async diff(path: string): Promise<string> {
    return this.run(['diff', '--no-color', '--no-ext-diff', '--no-textconv', 'HEAD', '--', pathspec(path)]);
  }

  /** Files not tracked and not ignored. */
  async untracked(path: string): Promise<string[]> {
    const output = await this.run(['ls-files', '--others', '--exclude-standard', '-z', '--', pathspec(path)]);
    return output.split('\0').filter((name) => name !== '');
  }

  /** Stages everything and commits; answers the new sha. */
  async commitAll(message: string, timestampMs: number): Promise<string> {
    await this.run(['add', '--all', '--', '.']);
    const { name, email } = this.settings.author;
    const date = `@${Math.floor(timestampMs / 1000)} +0000`;
    await this.run([
      'commit',
      '--quiet',
      '--no-verify',
      '--no-gpg-sign',
      '--cleanup=verbatim',
      `--author=${name} <${email}>`,
      `--date=${date}`,
      '-m',
      message,
    ]);
    return (await this.head()) as string;
  }

  /** Whether anything would be committed (tracked changes or untracked files). */
  async dirty(): Promise<boolean> {
    return (await this.run(['status', '--porcelain=v1', '--untracked-files=all'])).trim() !== '';
  }

  /** Whether `path` (a file or a directory) exists in commit `sha`. */
  async existsAt(sha: string, path: string): Promise<boolean> {
    const output = await this.run(['ls-tree', '--name-only', sha, '--', pathspec(path)]);
    return output.trim() !== '';
  }

  /** Puts `path` in the working tree back as it is in `sha` (the index is left alone). */
  async restore(sha: string, path: string): Promise<void> {
    await this.run(['restore', `--source=${sha}`, '--worktree', '--', pathspec(path)]);
  }

  /** Lines matching `pattern` (fixed string unless `regex`), tracked and untracked, text files only. */
  async grep(
    pattern: string,
    options: { path: string; regex: boolean; ignoreCase: boolean },
  ): Promise<string> {
    const args = ['grep', '--untracked', '-n', '-I', '--no-color', '--full-name', '-z'];
    args.push(options.regex ? '-E' : '-F');
    if (options.ignoreCase) args.push('-i');
    args.push('-e', pattern, '--', pathspec(options.path));
    try {
      return await this.git.raw([...this.location, ...args]);
    } catch (error) {
      // git grep exits 1 when nothing matches; simple-git reports that as an error without output.
      if (/exit(ed)? (with )?code 1\b/i.test(String(error)) || String((error as Error).message ?? '') === '')
        return '';
      throw new WorkspaceError('GIT_FAILED', 'git grep failed in the workspace', { cause: error });
    }
  }

  /** Tracked and untracked (not ignored) files matching a glob pathspec. */
  async glob(pattern: string): Promise<string[]> {
    const output = await this.run([
      'ls-files',
      '--cached',
      '--others',
      '--exclude-standard',
      '-z',
      '--',
      `:(glob)${pattern}`,
    ]);
    return [...new Set(output.split('\0').filter((name) => name !== ''))];
  }
}

/** The pathspec of a normalised path: `.` for the root; literal otherwise (no glob magic). */
function pathspec(path: string): string {
  return path === '' ? '.' : `:(literal)${path}`;
}
