import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BuiltinRefusal, confine, runBuiltin } from './builtins.js';
import { openInside } from './safe-fs.js';

let root: string;
let outside: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'agentd-builtins-'));
  outside = mkdtempSync(join(tmpdir(), 'agentd-outside-'));
  mkdirSync(join(root, 'src'));
  writeFileSync(join(root, 'src', 'a.ts'), 'const alpha = 1;\nconst beta = 2;\n');
  writeFileSync(join(root, 'data.json'), JSON.stringify({ items: [{ n: 1 }, { n: 2 }] }));
  writeFileSync(join(outside, 'secret.txt'), 'hidden');
  symlinkSync(outside, join(root, 'escape'));
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

const ctx = () => ({ root, bwrapPath: 'bwrap', signal: new AbortController().signal, webFetch: undefined });

describe('builtins', () => {
  it('confines paths, symlinks included', async () => {
    await expect(confine(root, '/workspace/src/a.ts')).resolves.toMatchObject({ shown: 'src/a.ts' });
    await expect(confine(root, '/etc/passwd')).rejects.toBeInstanceOf(BuiltinRefusal);
    await expect(confine(root, '../')).rejects.toThrow(/outside the workspace/);
    await expect(confine(root, 'escape/secret.txt')).rejects.toThrow(/outside the workspace/);
  });

  it('reads, lists, finds, greps and queries JSON', async () => {
    expect(await runBuiltin('read', { path: 'src/a.ts', limit: 5 }, ctx())).toMatchObject({
      text: 'const',
      truncated: true,
    });
    expect(await runBuiltin('ls', {}, ctx())).toMatchObject({
      entries: expect.arrayContaining([
        { name: 'src', type: 'dir' },
        { name: 'escape', type: 'link' },
      ]),
    });
    expect(await runBuiltin('find', { name: '*.ts' }, ctx())).toMatchObject({ results: ['src/a.ts'] });
    expect(await runBuiltin('grep', { pattern: 'be+ta', path: 'src' }, ctx())).toEqual({
      matches: [{ path: 'src/a.ts', line: 2, text: 'const beta = 2;' }],
      truncated: false,
    });
    expect(await runBuiltin('jq', { filter: '.items[].n', path: 'data.json' }, ctx())).toEqual({
      results: [1, 2],
    });
  });

  it('refuses jq modules, the environment stays empty, and bad args name the field', async () => {
    await expect(
      runBuiltin('jq', { filter: 'import "x" as x; .', path: 'data.json' }, ctx()),
    ).rejects.toThrow(/modules/);
    // The daemon's environment never reaches jq: only the PATH it needs.
    expect(await runBuiltin('jq', { filter: '$ENV | keys', path: 'data.json' }, ctx())).toEqual({
      results: [['PATH']],
    });
    await expect(runBuiltin('read', { path: 3 }, ctx())).rejects.toThrow(/args.path/);
    await expect(runBuiltin('web_fetch', { url: 'https://example.com' }, ctx())).rejects.toThrow(
      /not configured/,
    );
  });
});

describe('openInside', () => {
  it('never follows a symlink at the end and refuses a handle outside the root', async () => {
    const link = join(root, 'escape');
    // The path was inside when checked; the open itself refuses the symlink it now is.
    expect(await openInside(root, link, 'dir')).toBeUndefined();
    expect(await openInside(root, join(outside, 'secret.txt'), 'file')).toBeUndefined();
    const handle = await openInside(root, join(root, 'data.json'), 'file');
    expect(handle).toBeDefined();
    await handle?.close();
    const directory = await openInside(root, join(root, 'src'), 'file');
    expect(directory).toBeDefined();
    await directory?.close();
    expect(await openInside(root, join(root, 'data.json'), 'dir')).toBeUndefined();
  });

  it('greps in a jail that holds only the workspace', async () => {
    writeFileSync(join(root, 'hit.txt'), 'needle\n');
    const found = await runBuiltin('grep', { pattern: 'needle|hidden' }, ctx());
    // The symlink to the outside directory is not walked: its file's "hidden" never matches.
    expect(found).toEqual({ matches: [{ path: 'hit.txt', line: 1, text: 'needle' }], truncated: false });
    await expect(
      runBuiltin('grep', { pattern: 'x' }, { ...ctx(), bwrapPath: '/nonexistent/bwrap' }),
    ).rejects.toThrow(/grep failed/);
  });
});
