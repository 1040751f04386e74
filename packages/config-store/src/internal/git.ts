import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type SimpleGit, simpleGit } from 'simple-git';
import { ConfigStoreError } from '../errors.js';

export interface GitIdentity {
  name: string;
  email: string;
}

export interface CountObjects {
  objects: number;
  sizeKb: number;
  looseObjects: number;
  packs: number;
}

export interface LogEntry {
  sha: string;
  date: string;
  message: string;
}

/**
 * The git operations the store needs, run against the data directory's own
 * repository. Identity, signing and colour are pinned with `-c` on every call
 * so the user's global or system config (or its absence, as root in CI) never
 * changes what a commit looks like or whether it succeeds.
 */
export class ConfigGit {
  private readonly git: SimpleGit;
  /**
   * True once this store has committed the file: later commits name it as a pathspec (`git commit
   * -- <file>` takes its working-tree content) instead of running `git add` first. Each git call is
   * a process start, which costs far more than the git work on a one-file repository.
   */
  private tracked = false;

  constructor(
    private readonly directory: string,
    private readonly fileName: string,
    private readonly identity: GitIdentity,
  ) {
    this.git = simpleGit({
      baseDir: directory,
      maxConcurrentProcesses: 2,
      trimmed: false,
      config: [
        `user.name=${identity.name}`,
        `user.email=${identity.email}`,
        'commit.gpgSign=false',
        'init.defaultBranch=main',
        'color.ui=false',
        'core.autocrlf=false',
        'core.quotePath=false',
        'diff.noprefix=false',
        'log.showSignature=false',
        // Objects are written with the daemon's umask (077: owner only); a system or global
        // `core.sharedRepository` would make the config history group- or world-readable.
        'core.sharedRepository=umask',
        // A data dir mounted from another user (a container volume, root in CI)
        // would otherwise be refused as "dubious ownership"; the trust is
        // limited to this one directory.
        `safe.directory=${directory}`,
      ],
    });
  }

  async init(): Promise<void> {
    await this.run(['init', '--quiet']);
  }

  /** Stage and commit the config file only; returns the new commit's sha. */
  async commit(message: string, timestampMs: number): Promise<string> {
    if (this.tracked) {
      // Untracked again (a `git rm --cached` by hand) or any other refusal: the full path below.
      const sha = await this.commitStaged(message, timestampMs).catch(() => undefined);
      if (sha !== undefined) return sha;
    }
    await this.run(['add', '--', this.fileName]);
    const sha = await this.commitStaged(message, timestampMs);
    this.tracked = true;
    return sha;
  }

  private async commitStaged(message: string, timestampMs: number): Promise<string> {
    await this.run([
      'commit',
      '--quiet',
      '--no-verify',
      '--no-gpg-sign',
      '--allow-empty-message',
      `--author=${this.identity.name} <${this.identity.email}>`,
      `--date=@${Math.floor(timestampMs / 1000)} +0000`,
      '-m',
      message,
      '--',
      this.fileName,
    ]);
    const sha = await this.head();
    if (sha === undefined)
      throw new ConfigStoreError('GIT_FAILED', `git commit made no HEAD in ${this.directory}`);
    return sha;
  }

  /** Undo a staged but uncommitted change of the config file after a failed commit. */
  async unstage(): Promise<void> {
    await this.run(['reset', '--quiet', '--', this.fileName]).catch(() => undefined);
  }

  /**
   * The sha HEAD points at, or `undefined` before the first commit. Read from the repository's
   * files when HEAD is a loose ref or detached (as git leaves it after every commit), which spares a
   * process start; anything else (a packed ref after `gc`, another ref backend) asks git.
   */
  async head(): Promise<string | undefined> {
    const gitDir = join(this.directory, '.git');
    const headText = await readFile(join(gitDir, 'HEAD'), 'utf8').catch(() => '');
    const symbolic = /^ref: (refs\/heads\/[^\s]+)\n?$/.exec(headText)?.[1];
    const direct =
      symbolic === undefined || symbolic.includes('..')
        ? headText
        : await readFile(join(gitDir, symbolic), 'utf8').catch(() => '');
    const sha = /^([0-9a-f]{40}|[0-9a-f]{64})\n?$/.exec(direct)?.[1];
    return sha ?? this.resolveCommit('HEAD');
  }

  /** Full sha of the commit `reference` names, or `undefined` when there is none. */
  async resolveCommit(reference: string): Promise<string | undefined> {
    // `--verify --quiet` prints nothing and fails for a name that is no commit.
    const sha = await this.git
      .revparse(['--verify', '--quiet', '--end-of-options', `${reference}^{commit}`])
      .catch(() => '');
    return sha || undefined;
  }

  /** The config file's text at a commit, or `undefined` when the commit has no such file. */
  async showFile(sha: string): Promise<string | undefined> {
    try {
      return await this.git.raw(['show', '--no-textconv', `${sha}:${this.fileName}`]);
    } catch {
      return undefined;
    }
  }

  /** True when the config file is untracked or differs from HEAD. */
  async isDirty(): Promise<boolean> {
    const status = await this.run(['status', '--porcelain', '--untracked-files=all', '--', this.fileName]);
    return status.trim() !== '';
  }

  async log(limit: number): Promise<LogEntry[]> {
    const output = await this.run([
      'log',
      `--max-count=${limit}`,
      '--format=%H%x1f%aI%x1f%B%x1e',
      '--',
      this.fileName,
    ]);
    return output
      .split('\x1e')
      .map((record) => record.trim())
      .filter((record) => record !== '')
      .map((record) => {
        const [sha = '', date = '', message = ''] = record.split('\x1f');
        return { sha, date: new Date(date).toISOString(), message: message.trim() };
      });
  }

  async countObjects(): Promise<CountObjects> {
    const output = await this.run(['count-objects', '-v']);
    const fields = new Map<string, number>();
    for (const line of output.split('\n')) {
      const [name, value] = line.split(':');
      if (name && value) fields.set(name.trim(), Number(value.trim()));
    }
    const read = (name: string) => fields.get(name) ?? 0;
    return {
      objects: read('count') + read('in-pack'),
      sizeKb: read('size') + read('size-pack'),
      looseObjects: read('count'),
      packs: read('packs'),
    };
  }

  async collectGarbage(): Promise<void> {
    // The store serialises writes, so nothing can be mid-commit here and
    // pruning unreachable objects immediately is safe.
    await this.run(['gc', '--quiet', '--prune=now']);
  }

  private async run(args: string[]): Promise<string> {
    try {
      return await this.git.raw(args);
    } catch (error) {
      throw new ConfigStoreError('GIT_FAILED', `git ${args[0]} failed in ${this.directory}`, {
        cause: error,
      });
    }
  }
}
