import { type SimpleGit, simpleGit } from 'simple-git';
import { invalid, WorkspaceError } from '../errors.js';

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
 * The git operations of one workspace. Every call names the repository with `--git-dir` (kept
 * outside the work tree) and `--work-tree`, so git never looks for a repository itself and can
 * never fall through to one above (the data directory is the config history's repository).
 * Hooks, fsmonitor, signing, external diff and text conversion are off and the identity is
 * pinned, so neither the user's git config nor the workspace changes what a call runs. Every
 * pathspec follows `--`.
 */
export class WorkspaceGit {
  private client: SimpleGit | undefined;
  private readonly location: string[];

  constructor(
    readonly root: string,
    readonly gitDir: string,
    private readonly settings: GitSettings,
  ) {
    this.location = [`--git-dir=${gitDir}`, `--work-tree=${root}`];
  }

  /** simple-git wants its directory to exist, so it is made at the first call (after init's mkdir). */
  private get git(): SimpleGit {
    const { root, gitDir, settings } = this;
    this.client ??= simpleGit({
      baseDir: root,
      maxConcurrentProcesses: 2,
      trimmed: false,
      timeout: { block: settings.timeoutMs },
      // Set here, never from caller input: the repository location (above), hooks pointed at
      // /dev/null and fsmonitor off (so no configured command ever runs).
      unsafe: { allowUnsafeConfigPaths: true, allowUnsafeHooksPath: true, allowUnsafeFsMonitor: true },
      config: [
        `user.name=${settings.author.name}`,
        `user.email=${settings.author.email}`,
        'commit.gpgSign=false',
        'init.defaultBranch=main',
        'color.ui=false',
        'core.autocrlf=false',
        'core.quotePath=false',
        'core.hooksPath=/dev/null',
        'core.fsmonitor=false',
        'core.sharedRepository=umask',
        'log.showSignature=false',
        'advice.detachedHead=false',
        `safe.directory=${root}`,
        `safe.directory=${gitDir}`,
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

  /**
   * Stages everything and commits; answers the new sha and the repositories nested in the
   * work tree, which are left out (git would record them as bare commit pointers).
   */
  async commitAll(message: string, timestampMs: number): Promise<{ sha: string; skipped: string[] }> {
    const skipped = await this.nestedRepositories();
    const excluded = skipped.map((path) => `:(exclude,literal)${path}`);
    await this.run(['add', '--all', '--', '.', ...excluded]);
    const { name, email } = this.settings.author;
    await this.run([
      'commit',
      '--quiet',
      '--no-verify',
      '--no-gpg-sign',
      '--cleanup=verbatim',
      `--author=${name} <${email}>`,
      `--date=@${Math.floor(timestampMs / 1000)} +0000`,
      '-m',
      message,
    ]);
    return { sha: (await this.head()) as string, skipped };
  }

  /** Untracked directories git will not enter: with every untracked file listed, only nested repositories stay directories. */
  async nestedRepositories(): Promise<string[]> {
    return (await this.status())
      .filter((entry) => entry.index === '?' && entry.path.endsWith('/'))
      .map((entry) => entry.path.slice(0, -1));
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
      const message = String((error as Error).message ?? '');
      // git grep exits 1 when nothing matches; simple-git reports that as an error without output.
      if (message.trim() === '') return '';
      if (/fatal: -e option/.test(message)) {
        throw invalid(
          'INVALID_PARAMS',
          'pattern',
          'pattern is not a valid POSIX extended regular expression',
        );
      }
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
