import { execFileSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type ConfigStoreLogger, createConfigStore } from './config-store.js';
import { ConfigStoreError } from './errors.js';
import { credentialSchema } from './secret-refs.js';

const gatewaySchema = z.object({
  host: z.string().default('127.0.0.1'),
  port: z.number().int().min(0).max(65535).default(7420),
  maxBatchSize: z.number().int().positive().default(50),
  tokens: z
    .array(z.object({ id: z.string(), token: credentialSchema, scopes: z.array(z.string()) }))
    .default([]),
});
const daemonSchema = z.object({
  logLevel: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
  logLevels: z.record(z.string(), z.string()).default({}),
});
const providersSchema = z.object({
  entries: z
    .record(z.string(), z.object({ apiKey: credentialSchema.optional(), baseUrl: z.string().optional() }))
    .default({}),
});
const storageSchema = z.object({ url: z.string().optional(), busyTimeoutMs: z.number().default(5000) });

const sections = {
  gateway: { schema: gatewaySchema, restartRequired: ['host', 'port'] },
  daemon: { schema: daemonSchema },
  providers: { schema: providersSchema },
  storage: { schema: storageSchema, restartRequired: ['*'] },
};

const temporaryDirectories: string[] = [];

function temporaryDirectory(prefix = 'config-store-'): string {
  const directory = mkdtempSync(join(tmpdir(), prefix));
  temporaryDirectories.push(directory);
  return directory;
}

function git(directory: string, ...args: string[]): string {
  return execFileSync('git', ['-C', directory, '-c', `safe.directory=${directory}`, ...args], {
    encoding: 'utf8',
  });
}

function commitCount(directory: string): number {
  return Number(git(directory, 'rev-list', '--count', 'HEAD').trim());
}

function head(directory: string): string {
  return git(directory, 'rev-parse', 'HEAD').trim();
}

async function caught(promise: Promise<unknown> | (() => unknown)): Promise<ConfigStoreError> {
  try {
    if (typeof promise === 'function') promise();
    else await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigStoreError);
    return error as ConfigStoreError;
  }
  throw new Error('expected a ConfigStoreError');
}

async function loadedStore(dataDir = temporaryDirectory(), extra: { logger?: ConfigStoreLogger } = {}) {
  let clock = Date.UTC(2025, 0, 1);
  const store = createConfigStore({
    dataDir,
    sections,
    now: () => {
      clock += 1000;
      return clock;
    },
    ...extra,
  });
  await store.load();
  return { store, dataDir, file: join(dataDir, 'config.yaml') };
}

afterEach(() => {
  for (const directory of temporaryDirectories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

describe('createConfigStore', () => {
  it('writes the defaults with a comment header and makes the initial commit on a fresh load', async () => {
    const { store, dataDir, file } = await loadedStore(join(temporaryDirectory(), 'nested', 'data'));
    const text = readFileSync(file, 'utf8');
    expect(text.startsWith('# agentd configuration')).toBe(true);
    expect(text).toContain('port: 7420');
    expect(store.current()).toEqual({
      gateway: { host: '127.0.0.1', port: 7420, maxBatchSize: 50, tokens: [] },
      daemon: { logLevel: 'info', logLevels: {} },
      providers: { entries: {} },
      storage: { busyTimeoutMs: 5000 },
    });
    expect(commitCount(dataDir)).toBe(1);
    expect(git(dataDir, 'log', '-1', '--format=%s|%an|%ae').trim()).toBe(
      'config: initial defaults|agentd|agentd@localhost',
    );
    expect(store.filePath).toBe(file);
    expect(store.sections).toEqual(['gateway', 'daemon', 'providers', 'storage']);
  });

  it('versions only the config file although the data dir holds databases and logs', async () => {
    const { store, dataDir } = await loadedStore();
    writeFileSync(join(dataDir, 'agentd.db'), 'binary');
    mkdirSync(join(dataDir, 'logs'));
    writeFileSync(join(dataDir, 'logs', 'agentd.log'), '{}\n');
    await store.patch({ daemon: { logLevel: 'debug' } });
    expect(git(dataDir, 'ls-files').trim()).toBe('config.yaml');
    expect(git(dataDir, 'status', '--porcelain', '--untracked-files=all').trim()).toBe('');
  });

  it('refuses to start on an invalid existing file, lists the issues and leaves the file untouched', async () => {
    const dataDir = temporaryDirectory();
    const file = join(dataDir, 'config.yaml');
    const content = '# mine\ngateway:\n  port: "not a number"\nsurprise: {}\n';
    writeFileSync(file, content);
    const store = createConfigStore({ dataDir, sections });
    const error = await caught(store.load());
    expect(error.code).toBe('CONFIG_INVALID');
    const issues = error.data?.issues as { pathText: string; message: string }[];
    expect(issues.map((issue) => issue.pathText)).toEqual(expect.arrayContaining(['gateway.port', '']));
    expect(issues.find((issue) => issue.pathText === '')?.message).toContain('surprise');
    expect(error.message).toContain('gateway.port');
    expect(readFileSync(file, 'utf8')).toBe(content);
    expect(() => git(dataDir, 'rev-parse', '--verify', '--quiet', 'HEAD')).toThrow();
    expect(() => store.read()).toThrow(expect.objectContaining({ code: 'NOT_LOADED' }));
  });

  it('refuses a file that is not valid YAML', async () => {
    const dataDir = temporaryDirectory();
    const content = 'gateway: [unclosed\n';
    writeFileSync(join(dataDir, 'config.yaml'), content);
    const error = await caught(createConfigStore({ dataDir, sections }).load());
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toContain('YAML');
    expect(readFileSync(join(dataDir, 'config.yaml'), 'utf8')).toBe(content);
  });

  it('imports an existing minimal file as the first commit without rewriting it', async () => {
    const dataDir = temporaryDirectory();
    const content = '# hand written\ngateway:\n  port: 8000\n';
    writeFileSync(join(dataDir, 'config.yaml'), content);
    const { store } = await loadedStore(dataDir);
    expect(readFileSync(join(dataDir, 'config.yaml'), 'utf8')).toBe(content);
    expect((store.get('gateway') as { port: number; host: string }).port).toBe(8000);
    expect((store.get('gateway') as { host: string }).host).toBe('127.0.0.1');
    expect(git(dataDir, 'log', '--format=%s').trim()).toBe('config: initial import');
  });

  it('rejects a section schema that cannot produce defaults from {}', () => {
    const error = (() => {
      try {
        createConfigStore({
          dataDir: temporaryDirectory(),
          sections: { bad: { schema: z.object({ need: z.string() }) } },
        });
      } catch (thrown) {
        return thrown as ConfigStoreError;
      }
      throw new Error('expected a throw');
    })();
    expect(error.code).toBe('INVALID_OPTIONS');
    expect(error.message).toContain('bad');
  });

  it('commits with its own identity when git has no global or system config', async () => {
    const home = temporaryDirectory('config-store-home-');
    const saved = { ...process.env };
    try {
      process.env.HOME = home;
      process.env.XDG_CONFIG_HOME = join(home, '.config');
      process.env.GIT_CONFIG_NOSYSTEM = '1';
      for (const name of [
        'GIT_AUTHOR_NAME',
        'GIT_AUTHOR_EMAIL',
        'GIT_COMMITTER_NAME',
        'GIT_COMMITTER_EMAIL',
        'EMAIL',
      ]) {
        delete process.env[name];
      }
      expect(() => execFileSync('git', ['config', '--global', 'user.email'], { encoding: 'utf8' })).toThrow();
      const dataDir = temporaryDirectory();
      const store = createConfigStore({
        dataDir,
        sections,
        author: { name: 'Config Bot', email: 'bot@example.test' },
      });
      await store.load();
      const result = await store.patch({ daemon: { logLevel: 'warn' } });
      expect(result.changedSections).toEqual(['daemon']);
      expect(git(dataDir, 'log', '--format=%an <%ae>|%cn <%ce>').trim().split('\n')).toEqual([
        'Config Bot <bot@example.test>|Config Bot <bot@example.test>',
        'Config Bot <bot@example.test>|Config Bot <bot@example.test>',
      ]);
      expect(git(dataDir, 'log', '-1', '--format=%G?').trim()).toBe('N');
    } finally {
      process.env = saved;
    }
  });

  it('writes the history owner-only under umask 077, even when the global git config shares the repository', async () => {
    const home = temporaryDirectory('config-store-home-');
    writeFileSync(join(home, '.gitconfig'), '[core]\n\tsharedRepository = group\n');
    const saved = { ...process.env };
    const previousUmask = process.umask(0o077);
    try {
      process.env.HOME = home;
      process.env.XDG_CONFIG_HOME = join(home, '.config');
      const dataDir = temporaryDirectory();
      const store = createConfigStore({ dataDir, sections });
      await store.load();
      await store.patch({ providers: { entries: { openai: { apiKey: 'sk-test-key-at-rest' } } } });
      const objects = listTree(join(dataDir, '.git'));
      expect(
        objects.filter((entry) => entry.path.includes(join('.git', 'objects', ''))).length,
      ).toBeGreaterThan(2);
      expect(objects.filter((entry) => (entry.mode & 0o077) !== 0).map((entry) => entry.path)).toEqual([]);
    } finally {
      process.umask(previousUmask);
      process.env = saved;
    }
  });
});

/** Every path under `root` with its permission bits (symlinks not followed). */
function listTree(root: string): Array<{ path: string; mode: number }> {
  const found: Array<{ path: string; mode: number }> = [];
  const visit = (path: string) => {
    const stat = lstatSync(path);
    found.push({ path, mode: stat.mode & 0o777 });
    if (stat.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
  };
  visit(root);
  return found;
}

describe('ConfigStore.read', () => {
  it('redacts credentials at any depth while get returns one section raw', async () => {
    const { store } = await loadedStore();
    await store.patch({
      providers: {
        entries: {
          x: { apiKey: 'sk-live-123', baseUrl: 'https://x.test' },
          y: { apiKey: '${secret:Y_KEY}' },
        },
      },
      gateway: { tokens: [{ id: 'admin', token: 'tok-abcdef', scopes: ['*'] }] },
    });
    const all = store.read() as { config: Record<string, Record<string, unknown>>; sections: string[] };
    expect(all.sections).toEqual(['gateway', 'daemon', 'providers', 'storage']);
    expect(all.config.providers).toEqual({
      entries: { x: { apiKey: '[REDACTED]', baseUrl: 'https://x.test' }, y: { apiKey: '${secret:Y_KEY}' } },
    });
    expect((all.config.gateway!.tokens as { token: string }[])[0]?.token).toBe('[REDACTED]');
    expect((store.read('gateway') as { tokens: { token: string }[] }).tokens[0]?.token).toBe('[REDACTED]');
    expect((store.get('gateway') as { tokens: { token: string }[] }).tokens[0]?.token).toBe('tok-abcdef');
    expect(JSON.stringify(store.get())).not.toContain('sk-live-123');
    expect(JSON.stringify(store.get())).not.toContain('tok-abcdef');
  });

  it('names an unknown section', async () => {
    const { store } = await loadedStore();
    const error = await caught(() => store.read('nope'));
    expect(error.code).toBe('SECTION_NOT_FOUND');
    expect(error.message).toContain('nope');
    expect((await caught(() => store.get('nope'))).code).toBe('SECTION_NOT_FOUND');
  });
});

describe('ConfigStore.schema', () => {
  it('returns the JSON Schema of the whole config or of one section', async () => {
    const { store } = await loadedStore();
    const whole = store.schema();
    expect(whole.sections).toEqual(['gateway', 'daemon', 'providers', 'storage']);
    expect(whole.section).toBeUndefined();
    expect(whole.schema.additionalProperties).toBe(false);
    expect(Object.keys(whole.schema.properties as object)).toEqual([
      'gateway',
      'daemon',
      'providers',
      'storage',
    ]);
    const gateway = store.schema('gateway');
    expect(gateway.section).toBe('gateway');
    expect((gateway.schema.properties as Record<string, { default?: unknown }>).port?.default).toBe(7420);
    expect((await caught(() => store.schema('nope'))).code).toBe('SECTION_NOT_FOUND');
  });
});

describe('ConfigStore.patch', () => {
  it('deep-merges, commits naming the sections and reports restart paths apart from hot changes', async () => {
    const { store, dataDir } = await loadedStore();
    await store.patch({ daemon: { logLevels: { rpc: 'debug', auth: 'warn' } } });
    const result = await store.patch(
      { gateway: { port: 9000, maxBatchSize: 10 }, daemon: { logLevels: { rpc: 'error' } } },
      { message: 'tighten batches' },
    );
    expect(result).toMatchObject({
      ok: true,
      changedSections: ['gateway', 'daemon'],
      restartRequired: ['gateway.port'],
    });
    expect(result.sha).toBe(head(dataDir));
    expect(store.get('daemon')).toEqual({ logLevel: 'info', logLevels: { rpc: 'error', auth: 'warn' } });
    expect(store.get('gateway')).toMatchObject({ host: '127.0.0.1', port: 9000, maxBatchSize: 10 });
    expect(git(dataDir, 'log', '-1', '--format=%B').trim()).toBe(
      'config: update gateway, daemon\n\ntighten batches',
    );
  });

  it('reports a whole restart-only section by name', async () => {
    const { store } = await loadedStore();
    const result = await store.patch({ storage: { busyTimeoutMs: 1 } });
    expect(result.restartRequired).toEqual(['storage']);
    expect(result.applied).toBe(false);
  });

  it('replaces arrays and removes a key given null so its default applies again', async () => {
    const { store } = await loadedStore();
    await store.patch({ gateway: { port: 9000, tokens: [{ id: 'a', token: 't1', scopes: ['rpc'] }] } });
    await store.patch({ gateway: { tokens: [{ id: 'b', token: 't2', scopes: ['admin'] }] } });
    expect((store.get('gateway') as { tokens: unknown[] }).tokens).toEqual([
      { id: 'b', token: 't2', scopes: ['admin'] },
    ]);
    const result = await store.patch({ gateway: { port: null } });
    expect((store.get('gateway') as { port: number }).port).toBe(7420);
    expect(result.restartRequired).toEqual(['gateway.port']);
  });

  it('keeps comments written by hand when it rewrites the file', async () => {
    const dataDir = temporaryDirectory();
    writeFileSync(
      join(dataDir, 'config.yaml'),
      '# top note\ngateway:\n  # why 8000: the proxy expects it\n  port: 8000\n',
    );
    const { store, file } = await loadedStore(dataDir);
    await store.patch({ daemon: { logLevel: 'debug' } });
    const text = readFileSync(file, 'utf8');
    expect(text).toContain('# top note');
    expect(text).toContain('# why 8000: the proxy expects it');
    expect(text).toContain('logLevel: debug');
  });

  it('refuses __proto__, constructor and prototype as keys in a patch, an apply and a set, writing nothing', async () => {
    const { store, dataDir, file } = await loadedStore();
    await store.patch({ providers: { entries: { alpha: { baseUrl: 'http://alpha.test' } } } });
    const before = readFileSync(file);
    const headBefore = head(dataDir);
    const attempts: Array<[() => Promise<unknown>, (string | number)[]]> = [
      // JSON.parse makes __proto__ an own key, as a JSON-RPC request would.
      [
        () => store.patch(JSON.parse('{"providers":{"entries":{"__proto__":{"baseUrl":"x"}}}}')),
        ['providers', 'entries', '__proto__'],
      ],
      [
        () => store.patch({ providers: { entries: { constructor: { baseUrl: 'x' } } } }),
        ['providers', 'entries', 'constructor'],
      ],
      [
        () => store.apply({ providers: { entries: { prototype: {} } } }),
        ['providers', 'entries', 'prototype'],
      ],
      [
        () => store.set('providers', 'entries.constructor', { baseUrl: 'x' }),
        ['providers', 'entries', 'constructor'],
      ],
      [
        () => store.set('providers', 'entries', JSON.parse('{"beta":{"__proto__":{}}}')),
        ['providers', 'entries', 'beta', '__proto__'],
      ],
    ];
    for (const [attempt, path] of attempts) {
      const error = await caught(attempt());
      expect(error.code).toBe('VALIDATION');
      expect(error.data?.issues).toEqual([expect.objectContaining({ path, code: 'unsafe_key' })]);
    }
    expect(readFileSync(file)).toEqual(before);
    expect(head(dataDir)).toBe(headBefore);
    expect(Object.keys((store.get('providers') as { entries: object }).entries)).toEqual(['alpha']);
  });

  it('writes nothing for an invalid patch and reports issues with paths', async () => {
    const { store, dataDir, file } = await loadedStore();
    await store.patch({ daemon: { logLevel: 'debug' } });
    const before = readFileSync(file);
    const headBefore = head(dataDir);
    const error = await caught(store.patch({ gateway: { port: -1 }, daemon: { logLevel: 'loud' } }));
    expect(error.code).toBe('VALIDATION');
    const issues = error.data?.issues as { path: (string | number)[]; message: string }[];
    expect(issues.map((issue) => issue.path)).toEqual(
      expect.arrayContaining([
        ['gateway', 'port'],
        ['daemon', 'logLevel'],
      ]),
    );
    expect(readFileSync(file).equals(before)).toBe(true);
    expect(head(dataDir)).toBe(headBefore);
    expect(git(dataDir, 'status', '--porcelain').trim()).toBe('');
    expect(store.get('daemon')).toMatchObject({ logLevel: 'debug' });
  });

  it('restores the file when git cannot commit, so file and history stay in step', async () => {
    const { store, dataDir, file } = await loadedStore();
    const before = readFileSync(file);
    const headBefore = head(dataDir);
    writeFileSync(join(dataDir, '.git', 'index.lock'), '');
    const error = await caught(store.patch({ daemon: { logLevel: 'debug' } }));
    expect(error.code).toBe('GIT_FAILED');
    expect(readFileSync(file).equals(before)).toBe(true);
    expect(head(dataDir)).toBe(headBefore);
    expect(store.get('daemon')).toMatchObject({ logLevel: 'info' });
    rmSync(join(dataDir, '.git', 'index.lock'));
    const retried = await store.patch({ daemon: { logLevel: 'debug' } });
    expect(retried.changedSections).toEqual(['daemon']);
  });

  it('treats an unknown top-level section as a validation error', async () => {
    const { store, dataDir } = await loadedStore();
    const headBefore = head(dataDir);
    const error = await caught(store.patch({ mystery: { on: true } }));
    expect(error.code).toBe('VALIDATION');
    expect(error.message).toContain('mystery');
    expect((await caught(store.patch('not an object'))).code).toBe('VALIDATION');
    expect(head(dataDir)).toBe(headBefore);
  });

  it('makes no commit for a patch that changes nothing', async () => {
    const { store, dataDir } = await loadedStore();
    const headBefore = head(dataDir);
    const result = await store.patch({ gateway: { port: 7420 }, daemon: {} });
    expect(result).toEqual({
      ok: true,
      sha: headBefore,
      changedSections: [],
      restartRequired: [],
      applied: false,
    });
    expect(commitCount(dataDir)).toBe(1);
  });

  it('lands both of two concurrent patches', async () => {
    const { store, dataDir } = await loadedStore();
    const results = await Promise.all([
      store.patch({ daemon: { logLevels: { a: 'debug' } } }),
      store.patch({ daemon: { logLevels: { b: 'warn' } } }),
      store.set('gateway', 'maxBatchSize', 7),
    ]);
    expect(new Set(results.map((result) => result.sha)).size).toBe(3);
    expect(store.get('daemon')).toEqual({ logLevel: 'info', logLevels: { a: 'debug', b: 'warn' } });
    expect((store.get('gateway') as { maxBatchSize: number }).maxBatchSize).toBe(7);
    expect(commitCount(dataDir)).toBe(4);
    const reloaded = createConfigStore({ dataDir, sections });
    await reloaded.load();
    expect(reloaded.get('daemon')).toEqual({ logLevel: 'info', logLevels: { a: 'debug', b: 'warn' } });
  });
});

describe('ConfigStore.set', () => {
  it('sets a dot-path key and returns the previous effective value', async () => {
    const { store, dataDir } = await loadedStore();
    const first = await store.set('daemon', 'logLevels.rpc', 'debug');
    expect(first.ok).toBe(true);
    expect('previous' in first).toBe(false);
    const second = await store.set('gateway', 'port', 8080);
    expect(second.previous).toBe(7420);
    expect(second.restartRequired).toEqual(['gateway.port']);
    expect(store.get('daemon')).toEqual({ logLevel: 'info', logLevels: { rpc: 'debug' } });
    expect(git(dataDir, 'log', '-1', '--format=%s').trim()).toBe('config: set gateway.port (gateway)');
    expect((await caught(store.set('nope', 'x', 1))).code).toBe('SECTION_NOT_FOUND');
    expect((await caught(store.set('gateway', 'a..b', 1))).code).toBe('VALIDATION');
  });
});

describe('ConfigStore.apply', () => {
  it('replaces the whole config, dropping keys that are not given', async () => {
    const { store, dataDir } = await loadedStore();
    await store.patch({ daemon: { logLevels: { rpc: 'debug' } }, gateway: { maxBatchSize: 5 } });
    const result = await store.apply({ gateway: { port: 7500 }, daemon: { logLevel: 'error' } });
    expect(result.changedSections).toEqual(['gateway', 'daemon']);
    expect(result.restartRequired).toEqual(['gateway.port']);
    expect(store.get('gateway')).toMatchObject({ port: 7500, maxBatchSize: 50 });
    expect(store.get('daemon')).toEqual({ logLevel: 'error', logLevels: {} });
    expect(git(dataDir, 'log', '-1', '--format=%s').trim()).toBe(
      'config: apply gateway, daemon, providers, storage',
    );
    const headBefore = head(dataDir);
    expect((await caught(store.apply({ gateway: { port: 'x' } }))).code).toBe('VALIDATION');
    expect(head(dataDir)).toBe(headBefore);
  });
});

describe('ConfigStore.history', () => {
  it('lists commits newest first with ISO dates and honours the limit', async () => {
    const { store } = await loadedStore();
    await store.set('gateway', 'maxBatchSize', 1);
    await store.set('gateway', 'maxBatchSize', 2);
    await store.set('daemon', 'logLevel', 'warn');
    const { entries } = await store.history();
    expect(entries.map((entry) => entry.message)).toEqual([
      'config: set daemon.logLevel (daemon)',
      'config: set gateway.maxBatchSize (gateway)',
      'config: set gateway.maxBatchSize (gateway)',
      'config: initial defaults',
    ]);
    expect(entries[0]?.date).toBe('2025-01-01T00:00:04.000Z');
    expect(entries[3]?.date).toBe('2025-01-01T00:00:01.000Z');
    expect(entries[0]?.sha).toMatch(/^[0-9a-f]{40}$/);
    const limited = await store.history(2);
    expect(limited.entries.map((entry) => entry.sha)).toEqual(entries.slice(0, 2).map((entry) => entry.sha));
  });
});

describe('ConfigStore.diff', () => {
  it('shows the last change by default, the changes since a sha, and rejects an unknown sha', async () => {
    const { store } = await loadedStore();
    const initial = (await store.history()).entries[0]!.sha;
    const firstDiff = await store.diff();
    expect(firstDiff.diff).toContain('+  port: 7420');
    await store.set('gateway', 'port', 8000);
    await store.set('daemon', 'logLevel', 'warn');
    const last = await store.diff();
    expect(last.diff).toContain('-  logLevel: info');
    expect(last.diff).toContain('+  logLevel: warn');
    expect(last.diff).not.toContain('port');
    const since = await store.diff(initial.slice(0, 10));
    expect(since.diff).toContain('--- a/config.yaml');
    expect(since.diff).toContain('+  port: 8000');
    expect(since.diff).toContain('+  logLevel: warn');
    expect((await caught(store.diff('deadbeefdeadbeef'))).code).toBe('NOT_FOUND');
    expect((await caught(store.diff('--output=/tmp/x'))).code).toBe('NOT_FOUND');
  });

  it('redacts credentials in diffs while keeping secret references', async () => {
    const { store } = await loadedStore();
    const initial = (await store.history()).entries[0]!.sha;
    await store.patch({
      gateway: { tokens: [{ id: 'ops', token: 'plain-secret-value-0123456789abcdef', scopes: ['*'] }] },
      providers: {
        entries: { openai: { apiKey: '${secret:OPENAI_KEY}', baseUrl: 'https://u:pw-9f8e@api.example/v1' } },
      },
      storage: { url: 'libsql://db.example?authToken=jwt-abc.def&mode=rw' },
    });
    for (const diff of [(await store.diff()).diff, (await store.diff(initial)).diff]) {
      expect(diff).not.toContain('plain-secret-value-0123456789abcdef');
      expect(diff).not.toContain('pw-9f8e');
      expect(diff).not.toContain('jwt-abc.def');
      expect(diff).toContain('token: "[REDACTED]"');
      expect(diff).toContain('${secret:OPENAI_KEY}');
      expect(diff).toContain('authToken=[REDACTED]&mode=rw');
      expect(diff).toContain('id: ops');
    }
  });

  it('never shows a secret from a block scalar cut by a hunk or from a flow mapping', async () => {
    const { store, file } = await loadedStore();
    const initial = (await store.history()).entries[0]!.sha;
    const keyLines = (changed: string) =>
      Array.from({ length: 8 }, (_, index) => `        sk-block-${index === 6 ? changed : `line-${index}`}`);
    const text = (changed: string, flow: string[]) =>
      [
        'daemon:',
        '  logLevel: info',
        'providers:',
        '  entries:',
        '    p:',
        '      apiKey: |',
        ...keyLines(changed),
        '      baseUrl: https://llm.example/v1',
        ...flow,
        '',
      ].join('\n');
    writeFileSync(file, text('line-6', []));
    await store.load();
    const before = (await store.history()).entries[0]!.sha;
    // A hand edit rotating one line of the key (its `apiKey: |` line is outside the hunk's
    // three lines of context) and adding a provider written as a flow mapping.
    writeFileSync(
      file,
      text('rotated-6', ['    q: { apiKey: sk-flow-secret-42, baseUrl: "https://q.example" }']),
    );
    await store.load();
    for (const diff of [
      (await store.diff()).diff,
      (await store.diff(before)).diff,
      (await store.diff(initial)).diff,
    ]) {
      expect(diff).not.toContain('sk-block');
      expect(diff).not.toContain('sk-flow-secret-42');
      expect(diff).toContain('--- a/config.yaml');
    }
    const last = (await store.diff()).diff;
    expect(last).toContain('+    q:');
    expect(last).toContain('+      apiKey: "[REDACTED]"');
    expect(last).toContain('+      baseUrl: https://q.example');
  });
});

describe('ConfigStore.rollback', () => {
  it('restores an earlier config as a new commit', async () => {
    const { store, dataDir, file } = await loadedStore();
    await store.set('gateway', 'maxBatchSize', 5);
    const target = head(dataDir);
    const targetText = readFileSync(file, 'utf8');
    await store.patch({ gateway: { maxBatchSize: 9, port: 9000 } });
    const result = await store.rollback(target);
    expect(result).toMatchObject({
      ok: true,
      restoredFrom: target,
      changedSections: ['gateway'],
      restartRequired: ['gateway.port'],
    });
    expect(result.sha).toBe(head(dataDir));
    expect(readFileSync(file, 'utf8')).toBe(targetText);
    expect(store.get('gateway')).toMatchObject({ maxBatchSize: 5, port: 7420 });
    expect(git(dataDir, 'log', '-1', '--format=%s').trim()).toBe(
      `config: rollback to ${target.slice(0, 12)} (gateway)`,
    );
    expect(commitCount(dataDir)).toBe(4);
    expect((await caught(store.rollback('abcdef0123456789'))).code).toBe('NOT_FOUND');
  });

  it("hands the restored config to the caller's check, which can refuse the rollback before anything is written", async () => {
    const { store, dataDir, file } = await loadedStore();
    await store.set('gateway', 'maxBatchSize', 5);
    const target = head(dataDir);
    await store.patch({ gateway: { maxBatchSize: 9 } });
    const before = readFileSync(file);
    const seen: unknown[] = [];
    const refusal = new Error('refused by policy');
    const check = (config: Record<string, unknown>) => {
      seen.push(config);
      throw refusal;
    };
    await expect(store.rollback(target, { check })).rejects.toBe(refusal);
    expect(seen).toEqual([
      expect.objectContaining({ gateway: expect.objectContaining({ maxBatchSize: 5 }) }),
    ]);
    expect(readFileSync(file)).toEqual(before);
    expect(head(dataDir)).not.toBe(target);
    expect((await store.rollback(target, { check: () => undefined })).restoredFrom).toBe(target);
  });

  it('refuses a commit whose config is invalid under the current schema and changes nothing', async () => {
    const dataDir = temporaryDirectory();
    const oldSections = {
      ...sections,
      daemon: { schema: z.object({ logLevel: z.enum(['info', 'trace']).default('info') }) },
    };
    const oldStore = createConfigStore({ dataDir, sections: oldSections });
    await oldStore.load();
    await oldStore.patch({ daemon: { logLevel: 'trace' } });
    const legacy = head(dataDir);
    await oldStore.patch({ daemon: { logLevel: 'info' } });

    const { store, file } = await loadedStore(dataDir);
    const before = readFileSync(file);
    const headBefore = head(dataDir);
    const error = await caught(store.rollback(legacy));
    expect(error.code).toBe('VALIDATION');
    expect((error.data!.issues as { pathText: string }[]).map((issue) => issue.pathText)).toEqual([
      'daemon.logLevel',
    ]);
    expect(readFileSync(file).equals(before)).toBe(true);
    expect(head(dataDir)).toBe(headBefore);
    expect(store.get('daemon')).toMatchObject({ logLevel: 'info' });
  });
});

describe('ConfigStore.gc', () => {
  it('packs the history and reports object counts before and after', async () => {
    const { store, dataDir } = await loadedStore();
    for (let index = 1; index <= 5; index += 1) await store.set('gateway', 'maxBatchSize', index);
    const result = await store.gc();
    expect(result.ok).toBe(true);
    expect(result.before.looseObjects).toBeGreaterThan(0);
    expect(result.after.looseObjects).toBe(0);
    expect(result.after.packs).toBe(1);
    expect(result.after.objects).toBeGreaterThan(0);
    expect(result.after.objects).toBeLessThanOrEqual(result.before.objects);
    expect(commitCount(dataDir)).toBe(6);
    expect((await store.history()).entries).toHaveLength(6);
  });

  it('answers the sha git has for HEAD when the branch ref is packed, and keeps committing', async () => {
    const { store, dataDir } = await loadedStore();
    await store.set('gateway', 'maxBatchSize', 2);
    await store.gc();
    expect(existsSync(join(dataDir, '.git', 'refs', 'heads', 'main'))).toBe(false);
    const unchanged = await store.patch({ gateway: { maxBatchSize: 2 } });
    expect(unchanged.sha).toBe(head(dataDir));
    const changed = await store.set('gateway', 'maxBatchSize', 3);
    expect(changed.sha).toBe(head(dataDir));
    expect(commitCount(dataDir)).toBe(3);
  });
});

describe('ConfigStore commits', () => {
  it('commits the file again after it was untracked by hand', async () => {
    const { store, dataDir } = await loadedStore();
    await store.set('gateway', 'maxBatchSize', 2);
    git(dataDir, 'rm', '--cached', '--quiet', 'config.yaml');
    git(dataDir, '-c', 'user.name=x', '-c', 'user.email=x@x', 'commit', '--quiet', '-m', 'untrack');
    const result = await store.set('gateway', 'maxBatchSize', 3);
    expect(result.sha).toBe(head(dataDir));
    expect(git(dataDir, 'ls-files').trim()).toBe('config.yaml');
    expect(git(dataDir, 'show', 'HEAD:config.yaml')).toContain('maxBatchSize: 3');
  });
});

describe('ConfigStore.onChange', () => {
  let errors: { object: Record<string, unknown>; message?: string }[];
  let logger: ConfigStoreLogger;

  beforeEach(() => {
    errors = [];
    const ignore = () => undefined;
    logger = {
      debug: ignore,
      info: ignore,
      warn: ignore,
      error: (object, message) => errors.push({ object, message }),
    };
  });

  it('tells listeners the new config and changed sections after the commit', async () => {
    const { store, dataDir } = await loadedStore(undefined, { logger });
    const seen: {
      logLevel: unknown;
      changedSections: string[];
      restartRequired: string[];
      committed: string;
    }[] = [];
    const unsubscribe = store.onChange((next, event) => {
      seen.push({
        logLevel: next.daemon.logLevel,
        changedSections: event.changedSections,
        restartRequired: event.restartRequired,
        committed: head(dataDir) === event.sha ? 'yes' : 'no',
      });
    });
    const result = await store.patch({ daemon: { logLevel: 'warn' }, gateway: { host: '0.0.0.0' } });
    expect(result.applied).toBe(true);
    expect(seen).toEqual([
      {
        logLevel: 'warn',
        changedSections: ['gateway', 'daemon'],
        restartRequired: ['gateway.host'],
        committed: 'yes',
      },
    ]);
    await store.patch({ daemon: { logLevel: 'warn' } });
    expect(seen).toHaveLength(1);
    unsubscribe();
    await store.patch({ daemon: { logLevel: 'error' } });
    expect(seen).toHaveLength(1);
  });

  it('logs a throwing listener, keeps the change and reports it as not applied', async () => {
    const { store } = await loadedStore(undefined, { logger });
    const later: string[] = [];
    store.onChange(() => {
      throw new Error('listener broke');
    });
    store.onChange((next) => {
      later.push(next.daemon.logLevel);
    });
    const result = await store.patch({ daemon: { logLevel: 'debug' } });
    expect(result.applied).toBe(false);
    expect(result.changedSections).toEqual(['daemon']);
    expect(later).toEqual(['debug']);
    expect(store.get('daemon')).toMatchObject({ logLevel: 'debug' });
    expect(errors).toHaveLength(1);
    expect((errors[0]!.object.err as Error).message).toBe('listener broke');
    expect(errors[0]!.object).toMatchObject({
      errorKind: 'internal',
      hint: expect.stringContaining('restart'),
    });
  });

  it('lets a listener start another write without deadlocking', async () => {
    const { store } = await loadedStore();
    let follow: Promise<unknown> | undefined;
    store.onChange((next) => {
      if (next.daemon.logLevel === 'debug' && !follow) follow = store.set('gateway', 'maxBatchSize', 3);
    });
    await store.patch({ daemon: { logLevel: 'debug' } });
    await follow;
    expect((store.get('gateway') as { maxBatchSize: number }).maxBatchSize).toBe(3);
  });
  it('lets a listener await a write of its own', async () => {
    const { store } = await loadedStore();
    const order: string[] = [];
    store.onChange(async (next, event) => {
      order.push(`${event.changedSections.join(',')}:${next.daemon.logLevel}`);
      if (next.daemon.logLevel === 'debug') {
        const nested = await store.set('daemon', 'logLevel', 'warn');
        order.push(`nested:${nested.changedSections.join(',')}`);
      }
    });
    const result = await store.patch({ daemon: { logLevel: 'debug' } });
    expect(result.changedSections).toEqual(['daemon']);
    expect(order).toEqual(['daemon:debug', 'daemon:warn', 'nested:daemon']);
    expect(store.get('daemon')).toMatchObject({ logLevel: 'warn' });
  });
});

describe('ConfigStore.load', () => {
  it('reloads a hand edit, commits it and tells listeners', async () => {
    const { store, dataDir, file } = await loadedStore();
    const changes: string[][] = [];
    store.onChange((_next, event) => {
      changes.push(event.changedSections);
    });
    writeFileSync(file, readFileSync(file, 'utf8').replace('logLevel: info', 'logLevel: error'));
    await store.load();
    expect(store.get('daemon')).toMatchObject({ logLevel: 'error' });
    expect(changes).toEqual([['daemon']]);
    expect(git(dataDir, 'log', '-1', '--format=%s').trim()).toBe('config: record edit made outside agentd');
  });

  it('keeps the running config when a reloaded file is invalid', async () => {
    const { store, file } = await loadedStore();
    const broken = 'daemon:\n  logLevel: shouting\n';
    writeFileSync(file, broken);
    expect((await caught(store.load())).code).toBe('CONFIG_INVALID');
    expect(store.get('daemon')).toMatchObject({ logLevel: 'info' });
    expect(readFileSync(file, 'utf8')).toBe(broken);
  });

  it('puts back a config file deleted while running', async () => {
    const warnings: Record<string, unknown>[] = [];
    const ignore = () => undefined;
    const logger: ConfigStoreLogger = {
      debug: ignore,
      info: ignore,
      warn: (object) => warnings.push(object),
      error: ignore,
    };
    const { store, file } = await loadedStore(undefined, { logger });
    await store.set('gateway', 'port', 8123);
    rmSync(file);
    await store.load();
    expect(existsSync(file)).toBe(true);
    expect(readFileSync(file, 'utf8')).toContain('port: 8123');
    expect(warnings).toEqual([
      expect.objectContaining({ file, errorKind: 'config', hint: expect.stringContaining('written back') }),
    ]);
  });
});
