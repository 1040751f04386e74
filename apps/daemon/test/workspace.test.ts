import { execFileSync } from 'node:child_process';
import { readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { workspaceHistoryPath } from '@agentd/workspace';
import { afterEach, describe, expect, it } from 'vitest';
import { daemonPool, rpcClient } from './helpers.js';

const pool = daemonPool('agentd-workspace-');
afterEach(() => pool.cleanup());

type Json = Parameters<ReturnType<typeof rpcClient>['call']>[1];

const config = {
  gateway: { wsHeartbeatMs: 0 },
  agents: { entries: { writer: { name: 'Writer', tools: ['workspace_*'] } } },
};

describe('workspace namespace', () => {
  it('serves the twelve methods over a real daemon against the agent repository', async () => {
    const daemon = await pool.start(pool.tempDir(), { config });
    const admin = rpcClient(daemon.url);
    const call = <T>(method: string, params: Json = {}) => admin.call<T>(method, params);

    expect(await call('workspace.status')).toEqual({
      agentId: 'default',
      initialized: false,
      changed: 0,
      pendingEdits: 0,
    });
    expect((await admin.fail('workspace.readFile', { path: 'AGENTS.md' })).code).toBe(-32004);
    const init = await call<{ created: boolean; head: string }>('workspace.init', {});
    expect(init.created).toBe(true);
    const root = join(daemon.dataDir, 'workspaces', 'default');
    expect(statSync(root).mode & 0o777).toBe(0o700);

    expect(await call('workspace.writeFile', { path: 'notes/a.md', content: 'hello\n' })).toEqual({
      path: 'notes/a.md',
      bytes: 6,
      created: true,
    });
    expect(await call('workspace.readFile', { path: 'notes/a.md' })).toEqual({
      path: 'notes/a.md',
      content: 'hello\n',
      truncated: false,
      binary: false,
      size: 6,
    });
    const listing = await call<{ entries: Array<{ name: string }> }>('workspace.listDir', {});
    expect(listing.entries.map((entry) => entry.name)).toContain('notes');
    expect(await call('workspace.git.status')).toMatchObject({
      clean: false,
      files: [{ path: 'notes/a.md' }],
    });
    await call('workspace.writeFile', { path: 'USER.md', content: 'Ada prefers short answers.\n' });
    expect(await call('workspace.git.diff', { path: 'USER.md' })).toMatchObject({
      diff: expect.stringContaining('+Ada prefers short answers.'),
      truncated: false,
    });
    const commit = await call<{ committed: boolean; sha: string }>('workspace.git.commit', {
      message: 'notes',
    });
    expect(commit.committed).toBe(true);
    const log = await call<{ commits: Array<{ sha: string; message: string }> }>('workspace.git.log', {
      limit: 5,
    });
    expect(log.commits.map((entry) => entry.sha)).toEqual([commit.sha, init.head]);
    expect(log.commits[0]?.message).toMatch(/Workspace-Edit: write USER\.md by operator \(token [^)]+\)/);

    expect(await call('workspace.resetFile', { path: 'USER.md' })).toEqual({
      path: 'USER.md',
      source: 'template',
    });
    expect(await call('workspace.git.restore', { path: 'USER.md' })).toEqual({
      path: 'USER.md',
      sha: commit.sha,
    });
    expect(readFileSync(join(root, 'USER.md'), 'utf8')).toBe('Ada prefers short answers.\n');
    expect(await call('workspace.deleteFile', { path: 'notes/a.md' })).toEqual({
      path: 'notes/a.md',
      deleted: true,
    });
    expect((await admin.fail('workspace.deleteFile', { path: 'notes/a.md' })).code).toBe(-32004);
    expect((await admin.fail('workspace.status', { agentId: 'nobody' })).message).toBe(
      'Agent not found: nobody',
    );
  });

  it('answers -32602 naming the field for every path that leaves the workspace, and writes nothing', async () => {
    const daemon = await pool.start(pool.tempDir(), { config });
    const admin = rpcClient(daemon.url);
    await admin.call('workspace.init', {});
    const root = join(daemon.dataDir, 'workspaces', 'default');
    const outside = pool.tempDir();
    writeFileSync(join(outside, 'secret.txt'), 'outside');
    symlinkSync(outside, join(root, 'escape'));
    const git = (...args: string[]) =>
      execFileSync(
        'git',
        [`--git-dir=${workspaceHistoryPath(daemon.dataDir, 'default')}`, `--work-tree=${root}`, ...args],
        {
          encoding: 'utf8',
        },
      );
    const before = git('rev-parse', 'HEAD');
    for (const path of [
      '../../config.yaml',
      '/etc/passwd',
      'escape/secret.txt',
      '.git/config',
      'a/.git/HEAD',
    ]) {
      for (const [method, params] of [
        ['workspace.readFile', { path }],
        ['workspace.writeFile', { path, content: 'pwned' }],
        ['workspace.deleteFile', { path }],
        ['workspace.git.restore', { path }],
      ] as const) {
        const error = await admin.fail(method, params);
        expect([method, path, error.code]).toEqual([method, path, -32602]);
        expect((error.data as { issues: Array<{ path: string[] }> }).issues[0]?.path).toEqual(['path']);
      }
    }
    expect((await admin.fail('workspace.readFile', { agentId: '../x', path: 'a' })).code).toBe(-32602);
    expect(
      (await admin.fail('workspace.git.restore', { path: 'USER.md', sha: '--help' })).data,
    ).toMatchObject({
      issues: [{ path: ['sha'] }],
    });
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('outside');
    expect(readFileSync(join(daemon.dataDir, 'config.yaml'), 'utf8')).not.toContain('pwned');
    expect(git('rev-parse', 'HEAD')).toBe(before);
    expect(git('status', '--porcelain').trim()).toBe('?? escape');
  });

  it('lets an agent edit through its tools, then the operator sees the diff and restores the file', async () => {
    const daemon = await pool.start(pool.tempDir(), { config });
    const admin = rpcClient(daemon.url);
    const say = (message: string) =>
      admin.call<{ response: string }>('agent.execute', {
        agentId: 'writer',
        message,
        sessionKey: 'default:rpc:ada',
      });

    // First use creates the workspace (autoInit is on by default).
    const write = await say(
      `/tool workspace_edit ${JSON.stringify({ path: 'AGENTS.md', oldText: '# Standing instructions', newText: '# Rules\n\nAlways answer in French.' })}`,
    );
    expect(write.response).toContain('Tool workspace_edit returned');
    await say(`/tool workspace_write ${JSON.stringify({ path: 'journal.md', content: 'day one' })}`);
    const read = await say(`/tool workspace_read ${JSON.stringify({ path: 'journal.md' })}`);
    expect(read.response).toContain('day one');
    // The tool runner's gates apply: the default agent is not allowed the workspace tools.
    const refused = await admin.call<{ response: string }>('agent.execute', {
      message: `/tool workspace_read ${JSON.stringify({ path: 'journal.md' })}`,
    });
    expect(refused.response).toContain('Tool workspace_read failed');
    expect(refused.response).not.toContain('day one');
    const outsideRead = await say(`/tool workspace_read ${JSON.stringify({ path: '../../config.yaml' })}`);
    expect(outsideRead.response).toContain('Tool workspace_read failed');

    const diff = await admin.call<{ diff: string; untracked: string[] }>('workspace.git.diff', {
      agentId: 'writer',
    });
    expect(diff.diff).toContain('+Always answer in French.');
    expect(diff.diff).toContain('-# Standing instructions');
    expect(diff.untracked).toEqual(['journal.md']);
    expect(await admin.call('workspace.status', { agentId: 'writer' })).toMatchObject({
      pendingEdits: 2,
      changed: 2,
    });

    await admin.call('workspace.git.restore', { agentId: 'writer', path: 'AGENTS.md' });
    expect((await admin.call<{ diff: string }>('workspace.git.diff', { agentId: 'writer' })).diff).toBe('');
    await admin.call('workspace.git.commit', { agentId: 'writer', message: 'keep the journal' });
    const [last] = (
      await admin.call<{ commits: Array<{ message: string }> }>('workspace.git.log', { agentId: 'writer' })
    ).commits;
    expect(last?.message).toContain(
      'Workspace-Edit: write journal.md by agent writer (session default:rpc:ada)',
    );
    expect(last?.message).toContain(
      'Workspace-Edit: edit AGENTS.md by agent writer (session default:rpc:ada)',
    );
  });

  it('applies a changed workspace section to the next call', async () => {
    const daemon = await pool.start(pool.tempDir(), { config });
    const admin = rpcClient(daemon.url);
    await admin.call('workspace.writeFile', { path: 'long.md', content: 'x'.repeat(3000) });
    expect(await admin.call('workspace.readFile', { path: 'long.md' })).toMatchObject({
      truncated: false,
      size: 3000,
    });
    await admin.call('config.patch', { workspace: { maxReadBytes: 1024, autoInit: false } });
    const read = await admin.call<{ content: string; truncated: boolean }>('workspace.readFile', {
      path: 'long.md',
    });
    expect(read.truncated).toBe(true);
    expect(read.content).toHaveLength(1024);
    // autoInit off: an agent's first write no longer creates its workspace.
    expect(
      (await admin.fail('workspace.writeFile', { agentId: 'writer', path: 'a.md', content: 'a' })).code,
    ).toBe(-32004);
  });

  it('keeps every write and commit of two concurrent callers', async () => {
    const daemon = await pool.start(pool.tempDir(), { config });
    const admin = rpcClient(daemon.url);
    await admin.call('workspace.init', {});
    const { token } = await admin.call<{ token: string }>('tokens.create', {
      scopes: ['admin'],
      id: 'second',
    });
    const other = rpcClient(daemon.url, token);
    const calls: Promise<unknown>[] = [];
    for (let index = 0; index < 12; index++) {
      for (const [name, client] of [
        ['first', admin],
        ['second', other],
      ] as const) {
        calls.push(
          client.call('workspace.writeFile', { path: `${name}/${index}.md`, content: `${name} ${index}` }),
        );
        calls.push(client.call('workspace.writeFile', { path: 'shared.md', content: `${name} ${index}` }));
        if (index % 4 === 3) calls.push(client.call('workspace.git.commit', { message: `${name} ${index}` }));
      }
    }
    await Promise.all(calls);
    await admin.call('workspace.git.commit', { message: 'rest' });
    expect(await admin.call('workspace.git.status')).toMatchObject({ clean: true, files: [] });
    const root = join(daemon.dataDir, 'workspaces', 'default');
    const tree = execFileSync(
      'git',
      [
        `--git-dir=${workspaceHistoryPath(daemon.dataDir, 'default')}`,
        `--work-tree=${root}`,
        'ls-tree',
        '-r',
        '--name-only',
        'HEAD',
      ],
      { encoding: 'utf8' },
    );
    for (let index = 0; index < 12; index++) {
      expect(tree).toContain(`first/${index}.md`);
      expect(tree).toContain(`second/${index}.md`);
    }
    const log = await admin.call<{ commits: Array<{ message: string }> }>('workspace.git.log', {
      limit: 100,
    });
    const trailers = log.commits.flatMap(
      (commit) =>
        commit.message.match(/Workspace-Edit: write shared\.md by operator \(token ([^)]+)\)/g) ?? [],
    );
    expect(trailers).toHaveLength(24);
    expect(new Set(trailers.map((line) => /token ([^)]+)/.exec(line)?.[1])).size).toBe(2);
  });

  it('refuses rpc-scoped tokens the writing methods and tenant-bound tokens every method', async () => {
    const daemon = await pool.start(pool.tempDir(), { config });
    const admin = rpcClient(daemon.url);
    await admin.call('workspace.init', {});
    const { token } = await admin.call<{ token: string }>('tokens.create', { scopes: ['rpc'] });
    const reader = rpcClient(daemon.url, token);
    expect(await reader.call('workspace.status')).toMatchObject({ initialized: true });
    expect((await reader.fail('workspace.writeFile', { path: 'a.md', content: 'x' })).code).toBe(-32603);
    const bound = await admin.call<{ token: string }>('tokens.create', { scopes: ['rpc'], tenant: 'acme' });
    expect((await rpcClient(daemon.url, bound.token).fail('workspace.status')).code).toBe(-32603);
  });
});
