import { execFileSync } from 'node:child_process';
import {
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isWorkspaceError, type WorkspaceErrorCode } from './errors.js';
import { historyPath, workspacePath } from './internal/paths.js';
import { WORKSPACE_TEMPLATES } from './internal/templates.js';
import { createWorkspaceService, type WorkspaceService } from './workspace-service.js';

let dataDir: string;
let outside: string;
let service: WorkspaceService;

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'agentd-ws-'));
  outside = mkdtempSync(join(tmpdir(), 'agentd-outside-'));
  writeFileSync(join(outside, 'secret.txt'), 'outside secret');
  service = createWorkspaceService({ dataDir });
});

afterEach(() => {
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

/** git run the way an operator would, to check what the service did. */
const git = (agentId: string, ...args: string[]) =>
  execFileSync(
    'git',
    [`--git-dir=${historyPath(dataDir, agentId)}`, `--work-tree=${workspacePath(dataDir, agentId)}`, ...args],
    { encoding: 'utf8', env: { ...process.env, GIT_CEILING_DIRECTORIES: dataDir } },
  );

async function failure(
  call: Promise<unknown>,
): Promise<{ code: WorkspaceErrorCode; field: unknown; message: string }> {
  const error = await call.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!isWorkspaceError(error)) throw new Error(`expected a WorkspaceError, got ${String(error)}`);
  return { code: error.code, field: error.data?.field, message: error.message };
}

describe('createWorkspaceService', () => {
  it('initialises a repository whose first commit holds exactly the template files', async () => {
    expect(await service.status('default')).toEqual({
      agentId: 'default',
      initialized: false,
      changed: 0,
      pendingEdits: 0,
    });
    const first = await service.init('default');
    expect(first.created).toBe(true);
    const root = service.path('default');
    expect(root).toBe(join(dataDir, 'workspaces', 'default'));
    expect(git('default', 'ls-tree', '--name-only', 'HEAD').trim().split('\n').sort()).toEqual(
      [...WORKSPACE_TEMPLATES.keys()].sort(),
    );
    // The repository lives outside the work tree: nothing in the workspace can reach its config.
    expect(existsSync(join(root, '.git'))).toBe(false);
    expect(existsSync(join(dataDir, 'workspaces', '.history', 'default.git', 'HEAD'))).toBe(true);
    expect(await service.init('default')).toEqual({ agentId: 'default', created: false, head: first.head });
    expect(await service.ensure('default')).toBe(root);
    expect(await service.ensure('other')).toBe(join(dataDir, 'workspaces', 'other'));
    expect((await service.status('other')).initialized).toBe(true);
    expect(await service.status('default')).toMatchObject({
      initialized: true,
      branch: 'main',
      head: first.head,
      changed: 0,
    });
  });

  it('keeps files already in the directory and never commits into the repository above it', async () => {
    // The data directory is a repository of its own (the config history).
    const dataGit = (...args: string[]) =>
      execFileSync('git', ['-C', dataDir, ...args], { encoding: 'utf8' });
    dataGit('init', '--quiet');
    mkdirSync(join(dataDir, 'workspaces', 'a1'), { recursive: true });
    writeFileSync(join(dataDir, 'workspaces', 'a1', 'AGENTS.md'), 'mine');
    await service.init('a1');
    const root = service.path('a1');
    expect(readFileSync(join(root, 'AGENTS.md'), 'utf8')).toBe('mine');
    expect(dataGit('rev-list', '--all').trim()).toBe('');
    expect(existsSync(join(root, '.git'))).toBe(false);
    // With its repository gone, the workspace is uninitialised: nothing falls through to the data dir's.
    rmSync(historyPath(dataDir, 'a1'), { recursive: true });
    const noAuto = createWorkspaceService({ dataDir, autoInit: false });
    expect((await failure(noAuto.writeFile('a1', 'x.md', 'x'))).code).toBe('NOT_INITIALIZED');
    expect((await failure(noAuto.gitLog('a1'))).code).toBe('NOT_INITIALIZED');
    expect(dataGit('rev-list', '--all').trim()).toBe('');
  });

  it('writes, reads, lists, deletes and commits files with the edits attributed', async () => {
    const written = await service.writeFile('default', 'notes/todo.md', 'buy milk\n', {
      kind: 'agent',
      agentId: 'default',
      sessionKey: 'default:rpc:ada',
    });
    expect(written).toEqual({ path: 'notes/todo.md', bytes: 9, created: true });
    expect(await service.readFile('default', './notes//todo.md')).toEqual({
      path: 'notes/todo.md',
      content: 'buy milk\n',
      truncated: false,
      binary: false,
      size: 9,
    });
    const listing = await service.listDir('default');
    expect(listing.entries.map((entry) => entry.name)).toEqual([
      '.gitignore',
      'AGENTS.md',
      'HEARTBEAT.md',
      'IDENTITY.md',
      'TOOLS.md',
      'USER.md',
      'notes',
    ]);
    expect((await service.listDir('default', 'notes')).entries).toEqual([
      { name: 'todo.md', type: 'file', size: 9 },
    ]);
    await service.deleteFile('default', 'USER.md', { kind: 'operator', caller: 'tok_1' });
    expect((await service.status('default')).pendingEdits).toBe(2);
    expect((await service.gitStatus('default')).files).toEqual([
      { path: 'USER.md', index: ' ', workingTree: 'D' },
      { path: 'notes/todo.md', index: '?', workingTree: '?' },
    ]);

    const commit = await service.gitCommit('default', 'Add the todo list', {
      kind: 'operator',
      caller: 'tok_1',
    });
    expect(commit).toMatchObject({ committed: true, files: 2 });
    const [last] = (await service.gitLog('default', 1)).commits;
    expect(last?.sha).toBe(commit.sha);
    expect(last?.author).toBe('agentd');
    expect(last?.message).toContain('Add the todo list');
    expect(last?.message).toContain(
      'Workspace-Edit: write notes/todo.md by agent default (session default:rpc:ada)',
    );
    expect(last?.message).toContain('Workspace-Edit: delete USER.md by operator (token tok_1)');
    expect((await service.status('default')).pendingEdits).toBe(0);
    expect(await service.gitCommit('default', 'again')).toEqual({
      committed: false,
      sha: commit.sha,
      files: 0,
    });
    expect((await service.gitLog('default')).commits).toHaveLength(2);
  });

  it('edits by exact replacement and refuses a missing or ambiguous match', async () => {
    await service.writeFile('default', 'a.txt', 'one two one');
    expect(
      (await failure(service.editFile('default', { path: 'a.txt', oldText: 'three', newText: 'x' }))).field,
    ).toBe('oldText');
    const ambiguous = await failure(
      service.editFile('default', { path: 'a.txt', oldText: 'one', newText: 'x' }),
    );
    expect(ambiguous.message).toContain('2 times');
    expect(await service.editFile('default', { path: 'a.txt', oldText: 'two', newText: '$& 2' })).toEqual({
      path: 'a.txt',
      replacements: 1,
    });
    expect((await service.readFile('default', 'a.txt')).content).toBe('one $& 2 one');
    await service.editFile('default', { path: 'a.txt', oldText: 'one', newText: '1', replaceAll: true });
    expect((await service.readFile('default', 'a.txt')).content).toBe('1 $& 2 1');
  });

  it('diffs the working tree against HEAD with untracked paths, and restores from a commit', async () => {
    await service.init('default');
    const root = service.path('default');
    const initial = (await service.gitLog('default')).commits[0]?.sha as string;
    await service.writeFile('default', 'AGENTS.md', 'Be terse.\n');
    await service.writeFile('default', 'new.md', 'fresh');
    const { diff, truncated, untracked } = await service.gitDiff('default');
    expect(truncated).toBe(false);
    expect(diff).toContain('--- a/AGENTS.md');
    expect(diff).toContain('+Be terse.');
    expect(untracked).toEqual(['new.md']);
    expect((await service.gitDiff('default', 'USER.md')).diff).toBe('');

    await service.gitCommit('default', 'terse');
    await service.writeFile('default', 'AGENTS.md', 'Be verbose.\n');
    expect(await service.gitRestore('default', 'AGENTS.md')).toEqual({
      path: 'AGENTS.md',
      sha: git('default', 'rev-parse', 'HEAD').trim(),
    });
    expect(readFileSync(join(root, 'AGENTS.md'), 'utf8')).toBe('Be terse.\n');
    await service.gitRestore('default', 'AGENTS.md', initial.slice(0, 10));
    expect(readFileSync(join(root, 'AGENTS.md'), 'utf8')).toBe(WORKSPACE_TEMPLATES.get('AGENTS.md'));
    await service.gitRestore('default', 'AGENTS.md', 'HEAD~0');
    expect(readFileSync(join(root, 'AGENTS.md'), 'utf8')).toBe('Be terse.\n');

    expect((await failure(service.gitRestore('default', 'new.md', initial))).code).toBe('FILE_NOT_FOUND');
    expect(await failure(service.gitRestore('default', 'AGENTS.md', 'deadbeef'))).toMatchObject({
      code: 'UNKNOWN_REVISION',
      field: 'sha',
    });
    expect(await failure(service.gitRestore('default', 'AGENTS.md', '--output=/tmp/x'))).toMatchObject({
      code: 'UNKNOWN_REVISION',
      field: 'sha',
    });
    expect(await failure(service.gitRestore('default', 'AGENTS.md', 'main'))).toMatchObject({
      code: 'UNKNOWN_REVISION',
    });
  });

  it('resets a template file to the template, another file to HEAD or to a given commit', async () => {
    await service.writeFile('default', 'IDENTITY.md', 'I am Bob');
    await service.writeFile('default', 'plan.md', 'v1');
    await service.gitCommit('default', 'v1');
    const v1 = (await service.gitLog('default', 1)).commits[0]?.sha as string;
    await service.writeFile('default', 'plan.md', 'v2');
    await service.gitCommit('default', 'v2');
    await service.writeFile('default', 'plan.md', 'v3');

    expect(await service.resetFile('default', 'IDENTITY.md')).toEqual({
      path: 'IDENTITY.md',
      source: 'template',
    });
    expect((await service.readFile('default', 'IDENTITY.md')).content).toBe(
      WORKSPACE_TEMPLATES.get('IDENTITY.md'),
    );
    expect(await service.resetFile('default', 'plan.md')).toMatchObject({ source: 'commit' });
    expect((await service.readFile('default', 'plan.md')).content).toBe('v2');
    expect(await service.resetFile('default', 'plan.md', v1)).toEqual({
      path: 'plan.md',
      source: 'commit',
      sha: v1,
    });
    expect((await service.readFile('default', 'plan.md')).content).toBe('v1');
    expect((await failure(service.resetFile('default', 'never.md'))).code).toBe('FILE_NOT_FOUND');
  });

  it('refuses every path that leaves the workspace with INVALID_PATH naming the field', async () => {
    await service.init('default');
    const root = service.path('default');
    symlinkSync(outside, join(root, 'out'));
    symlinkSync(join(outside, 'secret.txt'), join(root, 'secret-link'));
    symlinkSync(historyPath(dataDir, 'default'), join(root, 'gitlink'));
    symlinkSync(join(root, 'nowhere'), join(root, 'dangling'));
    linkSync(join(outside, 'secret.txt'), join(root, 'hard.txt'));
    const attempts = [
      '../outside.txt',
      'notes/../../x',
      '/etc/passwd',
      join(outside, 'secret.txt'),
      '.git/config',
      'sub/.GIT/config',
      'out/secret.txt',
      'out/new.txt',
      'secret-link',
      'gitlink/config',
      'dangling',
      'hard.txt',
      'a\\..\\..\\b',
      'nul\0byte',
    ];
    for (const path of attempts) {
      for (const [name, call] of [
        ['read', () => service.readFile('default', path)],
        ['write', () => service.writeFile('default', path, 'pwned')],
        ['delete', () => service.deleteFile('default', path)],
      ] as const) {
        const refused = await failure(call()).catch((error: Error) => ({ error: error.message }));
        expect(refused, `${name} ${path}`).toMatchObject({ code: 'INVALID_PATH', field: 'path' });
      }
    }
    for (const path of ['../', '/tmp', 'out', 'gitlink']) {
      expect((await failure(service.listDir('default', path))).code, path).toBe('INVALID_PATH');
    }
    expect((await failure(service.gitRestore('default', '../x'))).code).toBe('INVALID_PATH');
    expect((await failure(service.gitDiff('default', '.git'))).code).toBe('INVALID_PATH');
    expect(
      (await failure(service.editFile('default', { path: 'out/secret.txt', oldText: 'o', newText: 'x' })))
        .code,
    ).toBe('INVALID_PATH');
    expect((await failure(service.glob('default', '../*'))).code).toBe('INVALID_PATH');
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('outside secret');
    expect(existsSync(join(outside, 'new.txt'))).toBe(false);
    expect(readFileSync(join(historyPath(dataDir, 'default'), 'config'), 'utf8')).not.toContain('pwned');
    // A symlink that stays inside is followed.
    symlinkSync(join(root, 'AGENTS.md'), join(root, 'inside-link'));
    expect((await service.readFile('default', 'inside-link')).content).toBe(
      WORKSPACE_TEMPLATES.get('AGENTS.md'),
    );
  });

  it('refuses agent ids that are not one path segment', async () => {
    for (const agentId of ['..', '../x', 'a/b', '', '.hidden', 'x'.repeat(65)]) {
      expect(await failure(service.writeFile(agentId, 'a.md', 'x')), agentId).toMatchObject({
        code: 'INVALID_PARAMS',
        field: 'agentId',
      });
    }
    expect(existsSync(join(dataDir, 'workspaces'))).toBe(false);
  });

  it('reports a binary file as binary and caps reads and diffs of huge files', async () => {
    const small = createWorkspaceService({
      dataDir,
      maxReadBytes: 1024,
      maxDiffBytes: 2048,
      maxWriteBytes: 64 * 1024,
    });
    await small.init('default');
    const root = small.path('default');
    writeFileSync(join(root, 'image.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]));
    writeFileSync(join(root, 'latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9]));
    expect(await small.readFile('default', 'image.png')).toEqual({
      path: 'image.png',
      content: '',
      truncated: false,
      binary: true,
      size: 8,
    });
    expect((await small.readFile('default', 'latin1.txt')).binary).toBe(true);

    // A multi-byte character cut by the cap is dropped, not turned into a replacement character.
    await small.writeFile('default', 'big.md', `${'é'.repeat(2000)}`);
    const big = await small.readFile('default', 'big.md');
    expect(big).toMatchObject({ truncated: true, binary: false, size: 4000 });
    expect(big.content).toBe('é'.repeat(512));

    expect(await failure(small.writeFile('default', 'huge.md', 'x'.repeat(64 * 1024 + 1)))).toMatchObject({
      code: 'TOO_LARGE',
    });
    await small.gitCommit('default', 'add files');
    writeFileSync(join(root, 'image.png'), Buffer.from([0x89, 0, 9, 9, 9]));
    await small.writeFile('default', 'big.md', 'y\n'.repeat(30_000));
    const diff = await small.gitDiff('default');
    expect(diff.truncated).toBe(true);
    expect(Buffer.byteLength(diff.diff)).toBeLessThanOrEqual(2048);
    expect((await small.gitDiff('default', 'image.png')).diff).toContain(
      'Binary files a/image.png and b/image.png differ',
    );
  });

  it('serialises concurrent writes and commits of two callers without losing any', async () => {
    await service.init('default');
    const writes = [];
    for (let index = 0; index < 20; index++) {
      const caller = index % 2 === 0 ? 'alice' : 'bob';
      writes.push(
        service.writeFile('default', `${caller}/${index}.md`, `${caller} ${index}`, {
          kind: 'operator',
          caller,
        }),
      );
      writes.push(
        service.writeFile('default', 'shared.md', `${caller} ${index}`, { kind: 'operator', caller }),
      );
      if (index % 5 === 4)
        writes.push(service.gitCommit('default', `${caller} commit ${index}`, { kind: 'operator', caller }));
    }
    await Promise.all(writes);
    await service.gitCommit('default', 'final');
    expect((await service.gitStatus('default')).clean).toBe(true);
    const tree = git('default', 'ls-tree', '-r', '--name-only', 'HEAD');
    for (let index = 0; index < 20; index++)
      expect(tree).toContain(`${index % 2 === 0 ? 'alice' : 'bob'}/${index}.md`);
    expect(['alice 19', 'bob 19']).toContain((await service.readFile('default', 'shared.md')).content);
    const log = git('default', 'log', '--format=%B');
    expect(log.match(/Workspace-Edit: write shared\.md/g)?.length).toBe(20);
  });

  it('clears a stale index.lock but leaves a fresh one alone', async () => {
    await service.init('default');
    const lock = join(historyPath(dataDir, 'default'), 'index.lock');
    writeFileSync(lock, '');
    await service.writeFile('default', 'a.md', 'a');
    const fresh = await failure(service.gitCommit('default', 'blocked'));
    expect(fresh.code).toBe('GIT_FAILED');
    expect(existsSync(lock)).toBe(true);
    const old = (Date.now() - 120_000) / 1000;
    utimesSync(lock, old, old);
    expect((await service.gitCommit('default', 'after a crash')).committed).toBe(true);
    expect(existsSync(lock)).toBe(false);
  });

  it('sanitises and caps commit messages', async () => {
    const capped = createWorkspaceService({ dataDir, maxCommitMessageChars: 60 });
    await capped.writeFile('default', 'a.md', 'a');
    await capped.gitCommit('default', `Fix\u001b[31m red\r\n\u202eevil\u0007\n\n\n\nbody ${'x'.repeat(200)}`);
    const message = (await capped.gitLog('default', 1)).commits[0]?.message as string;
    const subject = message.split('\n\nWorkspace-Edit')[0] as string;
    expect(subject.startsWith('Fix[31m red\nevil\n\nbody x')).toBe(true);
    expect([...subject].length).toBeLessThanOrEqual(60);
    for (const removed of ['\u0000', '\u0007', '\u001b', '\u202e']) expect(message).not.toContain(removed);
    await capped.writeFile('default', 'b.md', 'b');
    expect(await failure(capped.gitCommit('default', ' \u0000\u0007\n '))).toMatchObject({
      code: 'INVALID_PARAMS',
      field: 'message',
    });
  });

  it('leaves a repository nested in the work tree out of commits', async () => {
    await service.init('default');
    const nested = join(service.path('default'), 'vendor', 'lib');
    mkdirSync(nested, { recursive: true });
    execFileSync('git', ['-C', nested, 'init', '--quiet']);
    writeFileSync(join(nested, 'code.js'), 'x');
    await service.writeFile('default', 'notes.md', 'n');
    expect(await service.gitCommit('default', 'with a nested repo')).toMatchObject({
      committed: true,
      files: 1,
      skipped: ['vendor/lib'],
    });
    expect(git('default', 'ls-tree', '-r', '--name-only', 'HEAD')).not.toContain('vendor');
    expect(await service.gitCommit('default', 'nothing else')).toMatchObject({
      committed: false,
      skipped: ['vendor/lib'],
    });
  });

  it('greps and globs over tracked and untracked files, binary files skipped', async () => {
    await service.init('default');
    await service.writeFile('default', 'notes/a.md', 'alpha\nBeta\n');
    await service.writeFile('default', 'notes/b.txt', 'beta gamma\n');
    writeFileSync(join(service.path('default'), 'notes', 'bin.dat'), Buffer.from('beta\0beta'));
    expect(
      (await service.grep('default', { pattern: 'beta', ignoreCase: true, path: 'notes' })).matches,
    ).toEqual([
      { path: 'notes/a.md', line: 2, text: 'Beta' },
      { path: 'notes/b.txt', line: 1, text: 'beta gamma' },
    ]);
    expect((await service.grep('default', { pattern: '^al.*a$', regex: true })).matches).toEqual([
      { path: 'notes/a.md', line: 1, text: 'alpha' },
    ]);
    expect((await service.grep('default', { pattern: 'no such text' })).matches).toEqual([]);
    expect(await failure(service.grep('default', { pattern: 'a(', regex: true }))).toMatchObject({
      code: 'INVALID_PARAMS',
      field: 'pattern',
    });
    expect((await service.grep('default', { pattern: '-e' })).matches).toEqual([]);
    expect((await service.glob('default', 'notes/*.md')).files).toEqual(['notes/a.md']);
    expect((await service.glob('default', '**/*.md')).files.sort()).toContain('HEARTBEAT.md');
  });
});
