import { access, mkdir, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Logger } from '@agentd/contracts';
import { invalid, WorkspaceError } from '../errors.js';
import type { WorkspaceSection } from '../options.js';
import { type PendingEdit, recordEdit, type WorkspaceActor } from './attribution.js';
import { writeConfined } from './files.js';
import { WorkspaceGit } from './git.js';
import { KeyedMutex } from '@agentd/async-control';
import { confine, fileNotFound, historyPath, workspacePath } from './paths.js';
import { WORKSPACE_TEMPLATES } from './templates.js';

/**
 * What every workspace operation shares: the settings (replaced by `applyConfig`), the
 * repositories, the per-workspace lock, and the steps most operations start with.
 */
export class WorkspaceContext {
  private readonly mutex = new KeyedMutex();
  /** Orders the `ready` checks per workspace, so callers reach `mutex` in the order they called. */
  private readonly arrivals = new KeyedMutex();
  private readonly repositories = new Map<string, WorkspaceGit>();

  constructor(
    public settings: WorkspaceSection,
    readonly dataDir: string,
    readonly logger: Logger,
    readonly now: () => number,
  ) {}

  /** Settings for the next call; repositories are rebuilt with the new git settings. */
  apply(settings: WorkspaceSection): void {
    this.settings = settings;
    this.repositories.clear();
  }

  gitOf(agentId: string): WorkspaceGit {
    const root = workspacePath(this.dataDir, agentId);
    let git = this.repositories.get(root);
    if (!git) {
      git = new WorkspaceGit(root, historyPath(this.dataDir, agentId), {
        author: this.settings.author,
        timeoutMs: this.settings.gitTimeoutMs,
      });
      this.repositories.set(root, git);
    }
    return git;
  }

  initialized(git: WorkspaceGit): Promise<boolean> {
    return access(join(git.gitDir, 'HEAD')).then(
      () => true,
      () => false,
    );
  }

  /**
   * The repository of an initialised workspace; created first when `create` and `autoInit`.
   * The check is file I/O whose completions can overtake one another, which let a later write
   * take the workspace lock before an earlier one (the file kept the earlier content); the checks
   * run one after another per workspace, so operations keep their call order.
   */
  ready(agentId: string, create: boolean): Promise<WorkspaceGit> {
    return this.arrivals.run(agentId, () => this.readyNow(agentId, create));
  }

  private async readyNow(agentId: string, create: boolean): Promise<WorkspaceGit> {
    const git = this.gitOf(agentId);
    if (await this.initialized(git)) return git;
    if (!create || !this.settings.autoInit) {
      throw new WorkspaceError(
        'NOT_INITIALIZED',
        `The workspace of agent ${agentId} is not initialised; call workspace.init`,
        { data: { agentId } },
      );
    }
    await this.init(agentId);
    return git;
  }

  /** Runs a change under the workspace's lock, after clearing a stale index lock. */
  exclusive<T>(git: WorkspaceGit, task: () => Promise<T>): Promise<T> {
    return this.mutex.run(git.root, async () => {
      await this.clearStaleLock(git);
      return task();
    });
  }

  private async clearStaleLock(git: WorkspaceGit): Promise<void> {
    const lock = join(git.gitDir, 'index.lock');
    const stats = await stat(lock).catch(() => undefined);
    if (!stats) return;
    // Every git of this service runs under the lock we hold, so a lock this old belongs to a
    // git that died (or to a foreign one stalled for minutes); a younger one is left alone.
    const age = this.now() - stats.mtimeMs;
    if (age < this.settings.staleLockMs) return;
    await unlink(lock).catch(() => undefined);
    this.logger.info({ ageMs: Math.round(age) }, 'workspace: removed a stale git index lock');
  }

  /** Creates the repository and commits the template files; no effect when it exists. */
  init(agentId: string): Promise<{ agentId: string; created: boolean; head: string }> {
    const git = this.gitOf(agentId);
    return this.mutex.run(git.root, async () => {
      if (await this.initialized(git)) return { agentId, created: false, head: (await git.head()) ?? '' };
      await mkdir(git.root, { recursive: true, mode: 0o700 });
      await mkdir(dirname(git.gitDir), { recursive: true, mode: 0o700 });
      await git.init();
      for (const [name, content] of WORKSPACE_TEMPLATES) {
        const target = await confine(git.root, name, 'path');
        // A directory made before (a cron wake gate runs there) keeps the files it has.
        if (!target.stats) await writeConfined(target, content);
      }
      const { sha } = await git.commitAll('workspace: initial template', this.now());
      this.logger.info({ agentId }, 'workspace: initialised');
      return { agentId, created: true, head: sha };
    });
  }

  record(
    git: WorkspaceGit,
    action: PendingEdit['action'],
    path: string,
    actor: WorkspaceActor,
  ): Promise<void> {
    return recordEdit(git.gitDir, { ts: this.now(), actor, action, path });
  }

  /** A caller's revision: a hex sha or `HEAD`, `HEAD~n`; resolved to a full sha of this repository. */
  async revision(git: WorkspaceGit, sha: string | undefined): Promise<string> {
    const reference = sha ?? 'HEAD';
    if (!/^(?:[0-9a-fA-F]{4,64}|HEAD(?:~\d{1,5})?)$/.test(reference)) {
      throw invalid('UNKNOWN_REVISION', 'sha', 'sha must be a commit hash (4-64 hex digits) or HEAD~n');
    }
    const full = await git.resolveCommit(reference);
    if (!full) throw invalid('UNKNOWN_REVISION', 'sha', `No commit ${reference} in the workspace`);
    return full;
  }

  /** Puts `path` back as it is in `sha` (default HEAD); answers the full sha. */
  async restoreFrom(git: WorkspaceGit, path: string, sha: string | undefined): Promise<string> {
    const full = await this.revision(git, sha);
    await confine(git.root, path, 'path');
    if (!(await git.existsAt(full, path))) throw fileNotFound(path);
    await git.restore(full, path);
    return full;
  }
}
