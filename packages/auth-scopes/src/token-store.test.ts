import { timingSafeEqual } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { AuthScopesError } from './errors.js';
import type { TokenConfig } from './token-config.js';
import { generateTokenSecret, hashToken } from './token-secret.js';
import { createTokenStore, type TokenStoreOptions } from './token-store.js';

vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>();
  return { ...actual, timingSafeEqual: vi.fn(actual.timingSafeEqual) };
});

const PLAIN = 'plain-secret-for-the-cli';
const HASHED = 'hashed-secret-for-ops';

function configured(): TokenConfig[] {
  return [
    { id: 'cli', clientId: 'cli-client', scopes: ['rpc'], token: PLAIN },
    { id: 'ops', clientId: 'ops-client', scopes: ['admin'], tokenHash: hashToken(HASHED), createdAt: 1000 },
  ];
}

/** A store over the {@link configured} tokens that records every list it persists. */
function persistingStore(options: Omit<TokenStoreOptions, 'tokens' | 'persist'> = {}) {
  const persisted: TokenConfig[][] = [];
  const store = createTokenStore({
    tokens: configured(),
    ...options,
    persist: async (tokens) => {
      persisted.push(tokens);
    },
  });
  return { store, persisted };
}

function sequence(prefix: string): () => string {
  let next = 0;
  return () => {
    next += 1;
    return `${prefix}${next}`;
  };
}

describe('createTokenStore', () => {
  it('authenticates a plaintext-configured token and a hashed one', () => {
    const store = createTokenStore({ tokens: configured() });
    expect(store.authenticate(PLAIN)).toEqual({ tokenId: 'cli', clientId: 'cli-client', scopes: ['rpc'] });
    expect(store.authenticate(HASHED)).toEqual({ tokenId: 'ops', clientId: 'ops-client', scopes: ['admin'] });
  });

  it('refuses a wrong, empty, missing or prefix-only token', () => {
    const store = createTokenStore({ tokens: configured() });
    expect(store.authenticate('not-a-token')).toBeNull();
    expect(store.authenticate('')).toBeNull();
    expect(store.authenticate(undefined)).toBeNull();
    expect(store.authenticate(null)).toBeNull();
    expect(store.authenticate(PLAIN.slice(0, -1))).toBeNull();
    expect(store.authenticate(`${PLAIN}x`)).toBeNull();
    expect(store.authenticate(hashToken(HASHED))).toBeNull();
  });

  it('compares against every token with timingSafeEqual on digests', () => {
    const spy = vi.mocked(timingSafeEqual);
    const store = createTokenStore({ tokens: configured() });
    spy.mockClear();
    store.authenticate(PLAIN);
    // The match is the first entry, yet the second is still compared.
    expect(spy).toHaveBeenCalledTimes(2);
    for (const [left, right] of spy.mock.calls) {
      expect((left as Buffer).length).toBe(32);
      expect((right as Buffer).length).toBe(32);
    }
    spy.mockClear();
    store.authenticate('wrong');
    expect(spy).toHaveBeenCalledTimes(2);
  });

  it('starts empty without options', () => {
    const store = createTokenStore();
    expect(store.size).toBe(0);
    expect(store.authenticate('anything')).toBeNull();
  });

  it('refuses an invalid token list with INVALID_TOKEN_CONFIG naming the problem', () => {
    const tokens = [
      { id: 'a', clientId: 'a', scopes: ['rpc'], token: 'same' },
      { id: 'a', clientId: 'b', scopes: ['rpc'], token: 'other' },
    ] as TokenConfig[];
    expect(() => createTokenStore({ tokens })).toThrow(
      expect.objectContaining({ code: 'INVALID_TOKEN_CONFIG', message: expect.stringContaining("'a'") }),
    );
  });

  it('refuses invalid options with INVALID_OPTIONS', () => {
    expect(() => createTokenStore({ now: 5 as unknown as () => number })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS' }),
    );
  });

  it('lists tokens without secrets or hashes', () => {
    const store = createTokenStore({ tokens: configured() });
    const listed = store.list();
    expect(listed).toEqual([
      { id: 'cli', clientId: 'cli-client', scopes: ['rpc'], createdAt: null, source: 'config' },
      { id: 'ops', clientId: 'ops-client', scopes: ['admin'], createdAt: 1000, source: 'config' },
    ]);
    const text = JSON.stringify(listed);
    expect(text).not.toContain(PLAIN);
    expect(text).not.toContain(hashToken(PLAIN).slice(7));
    expect(text).not.toContain(hashToken(HASHED).slice(7));
  });

  it('does not let a caller change a token through the returned scopes', () => {
    const store = createTokenStore({ tokens: configured() });
    const identity = store.authenticate(PLAIN);
    expect(Object.isFrozen(identity?.scopes)).toBe(true);
    store.list()[0]?.scopes.push('admin');
    expect(store.authenticate(PLAIN)?.scopes).toEqual(['rpc']);
  });

  describe('create', () => {
    it('returns the secret once, keeps only its hash and lists the token as api', async () => {
      const { store, persisted } = persistingStore({ now: () => 42_000, randomId: sequence('gen') });
      const created = await store.create({ scopes: ['rpc'] });
      expect(created).toEqual({
        id: 'gen1',
        clientId: 'gen1',
        scopes: ['rpc'],
        createdAt: 42_000,
        token: created.token,
      });
      expect(created.token).toMatch(/^agd_/);
      expect(store.authenticate(created.token)).toEqual({
        tokenId: 'gen1',
        clientId: 'gen1',
        scopes: ['rpc'],
      });
      expect(store.list().at(-1)).toEqual({
        id: 'gen1',
        clientId: 'gen1',
        scopes: ['rpc'],
        createdAt: 42_000,
        source: 'api',
      });
      expect(JSON.stringify(store.list())).not.toContain(created.token);

      expect(persisted).toHaveLength(1);
      const saved = persisted[0] ?? [];
      expect(saved.map((token) => token.id)).toEqual(['cli', 'ops', 'gen1']);
      for (const token of saved) {
        expect(token.token).toBeUndefined();
        expect(token.tokenHash).toMatch(/^sha256:[0-9a-f]{64}$/);
      }
      expect(saved[2]).toEqual({
        id: 'gen1',
        clientId: 'gen1',
        scopes: ['rpc'],
        tokenHash: hashToken(created.token),
        createdAt: 42_000,
        source: 'api',
      });
      // The plaintext-configured token is persisted in hashed form only.
      expect(saved[0]).toEqual({
        id: 'cli',
        clientId: 'cli-client',
        scopes: ['rpc'],
        tokenHash: hashToken(PLAIN),
      });
      const text = JSON.stringify(persisted);
      expect(text).not.toContain(created.token);
      expect(text).not.toContain(PLAIN);
    });

    it('uses the given id and clientId and orders scopes without repeats', async () => {
      const store = createTokenStore();
      const created = await store.create({
        id: 'dash',
        clientId: 'dashboard',
        scopes: ['admin', 'rpc', 'admin'],
      });
      expect(created).toMatchObject({ id: 'dash', clientId: 'dashboard', scopes: ['rpc', 'admin'] });
    });

    it('refuses an id that already exists', async () => {
      const store = createTokenStore({ tokens: configured() });
      await expect(store.create({ id: 'cli', scopes: ['rpc'] })).rejects.toMatchObject({
        code: 'TOKEN_EXISTS',
      });
      expect(store.size).toBe(2);
    });

    it('skips generated ids that are taken', async () => {
      const ids = ['cli', 'ops', 'fresh'];
      const store = createTokenStore({ tokens: configured(), randomId: () => ids.shift() ?? 'never' });
      expect((await store.create({ scopes: ['rpc'] })).id).toBe('fresh');
    });

    it('refuses a supplied secret that another token already uses', async () => {
      const store = createTokenStore({ tokens: configured() });
      await expect(store.create({ scopes: ['*'], secret: PLAIN })).rejects.toMatchObject({
        code: 'TOKEN_EXISTS',
      });
    });

    it('refuses an empty scope list with INVALID_ARGUMENT', async () => {
      const store = createTokenStore();
      await expect(store.create({ scopes: [] })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      await expect(store.create({ id: 'has space', scopes: ['rpc'] })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
      });
    });

    it('gives every created token a distinct id and secret', async () => {
      const store = createTokenStore();
      const created = await Promise.all(Array.from({ length: 20 }, () => store.create({ scopes: ['rpc'] })));
      expect(new Set(created.map((token) => token.id)).size).toBe(20);
      expect(new Set(created.map((token) => token.token)).size).toBe(20);
      expect(store.size).toBe(20);
    });

    it('leaves nothing behind when persist fails and rethrows as PERSIST_FAILED', async () => {
      const cause = new Error('disk full');
      const store = createTokenStore({
        tokens: configured(),
        randomId: () => 'doomed',
        persist: async () => {
          throw cause;
        },
      });
      const before = store.list();
      const failure = await store.create({ scopes: ['rpc'] }).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(AuthScopesError);
      expect(failure).toMatchObject({ code: 'PERSIST_FAILED', cause });
      expect(store.list()).toEqual(before);
      expect(store.size).toBe(2);
    });

    it('makes the token usable only after persist completes', async () => {
      let release: () => void = () => {};
      let seen: TokenConfig[] = [];
      const store = createTokenStore({
        persist: (tokens) => {
          seen = tokens;
          return new Promise<void>((resolve) => {
            release = resolve;
          });
        },
      });
      const pending = store.create({ id: 'late', scopes: ['rpc'] });
      await vi.waitFor(() => expect(seen).toHaveLength(1));
      expect(store.size).toBe(0);
      release();
      const created = await pending;
      expect(store.authenticate(created.token)?.tokenId).toBe('late');
    });
  });
});

describe('createTokenStore', () => {
  describe('revoke', () => {
    it('takes effect at once, persists, and tells listeners', async () => {
      const { store, persisted } = persistingStore();
      const revoked: Array<[string, string]> = [];
      store.onRevoke((tokenId, clientId) => revoked.push([tokenId, clientId]));
      await expect(store.revoke('cli')).resolves.toEqual({ revoked: true, id: 'cli' });
      expect(store.authenticate(PLAIN)).toBeNull();
      expect(store.authenticate(HASHED)?.tokenId).toBe('ops');
      expect(store.list().map((token) => token.id)).toEqual(['ops']);
      expect(revoked).toEqual([['cli', 'cli-client']]);
      expect(persisted.at(-1)?.map((token) => token.id)).toEqual(['ops']);
    });

    it('refuses the token while its revocation is still being persisted', async () => {
      let release: (() => void) | undefined;
      const store = createTokenStore({
        tokens: configured(),
        persist: () =>
          new Promise<void>((resolve) => {
            release = resolve;
          }),
      });
      const listener = vi.fn();
      store.onRevoke(listener);
      const pending = store.revoke('ops');
      expect(store.authenticate(HASHED)).toBeNull();
      expect(listener).not.toHaveBeenCalled();
      await vi.waitFor(() => expect(release).toBeTypeOf('function'));
      expect(store.authenticate(HASHED)).toBeNull();
      release?.();
      await pending;
      expect(listener).toHaveBeenCalledWith('ops', 'ops-client');
    });

    it('throws TOKEN_NOT_FOUND for an unknown id', async () => {
      const store = createTokenStore({ tokens: configured() });
      const failure = await store.revoke('ghost').catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(AuthScopesError);
      expect(failure).toMatchObject({ code: 'TOKEN_NOT_FOUND', message: 'Token not found: ghost' });
    });

    it('restores the token and fires nothing when persist fails', async () => {
      const store = createTokenStore({
        tokens: configured(),
        persist: async () => {
          throw new Error('read-only file system');
        },
      });
      const listener = vi.fn();
      store.onRevoke(listener);
      await expect(store.revoke('cli')).rejects.toMatchObject({ code: 'PERSIST_FAILED' });
      expect(store.authenticate(PLAIN)?.tokenId).toBe('cli');
      expect(store.size).toBe(2);
      expect(listener).not.toHaveBeenCalled();
    });

    it('keeps working when a listener throws, and stops calling unsubscribed listeners', async () => {
      const store = createTokenStore({ tokens: configured() });
      const later = vi.fn();
      const gone = vi.fn();
      store.onRevoke(() => {
        throw new Error('listener bug');
      });
      store.onRevoke(later);
      const unsubscribe = store.onRevoke(gone);
      unsubscribe();
      await store.revoke('cli');
      expect(later).toHaveBeenCalledWith('cli', 'cli-client');
      expect(gone).not.toHaveBeenCalled();
    });

    it('revokes a token created through the api', async () => {
      const store = createTokenStore();
      const created = await store.create({ scopes: ['*'] });
      await store.revoke(created.id);
      expect(store.authenticate(created.token)).toBeNull();
      expect(store.size).toBe(0);
    });
  });

  describe('replace', () => {
    it('swaps the token list and revokes removed and changed identities', () => {
      const store = createTokenStore({ tokens: configured() });
      const revoked = vi.fn();
      store.onRevoke(revoked);
      const next: TokenConfig[] = [
        { id: 'ops', clientId: 'ops-client', scopes: ['*'], tokenHash: hashToken(HASHED) },
        { id: 'new', clientId: 'new', scopes: ['rpc'], token: 'brand-new-secret' },
      ];
      expect(store.replace(next)).toEqual({ added: ['new'], changed: ['ops'], removed: ['cli'] });
      expect(store.authenticate(PLAIN)).toBeNull();
      expect(store.authenticate(HASHED)?.scopes).toEqual(['*']);
      expect(store.authenticate('brand-new-secret')?.tokenId).toBe('new');
      expect(revoked.mock.calls).toEqual([
        ['cli', 'cli-client'],
        ['ops', 'ops-client'],
      ]);
    });

    it('keeps unchanged tokens, including the source of api-created ones, without revoking them', async () => {
      const { store, persisted } = persistingStore();
      const created = await store.create({ id: 'api-made', scopes: ['rpc'] });
      const revoked = vi.fn();
      store.onRevoke(revoked);
      // The daemon writes the persisted list to config; its reload hands it back.
      expect(store.replace(persisted.at(-1) ?? [])).toEqual({ added: [], changed: [], removed: [] });
      expect(revoked).not.toHaveBeenCalled();
      expect(store.list().find((token) => token.id === 'api-made')?.source).toBe('api');
      expect(store.authenticate(created.token)?.tokenId).toBe('api-made');
      expect(store.authenticate(PLAIN)?.tokenId).toBe('cli');
    });

    it('revokes a token whose secret was rotated under the same id', () => {
      const store = createTokenStore({ tokens: configured() });
      const revoked = vi.fn();
      store.onRevoke(revoked);
      const rotated = generateTokenSecret();
      store.replace([
        { id: 'cli', clientId: 'cli-client', scopes: ['rpc'], token: rotated },
        configured()[1]!,
      ]);
      expect(revoked).toHaveBeenCalledExactlyOnceWith('cli', 'cli-client');
      expect(store.authenticate(PLAIN)).toBeNull();
      expect(store.authenticate(rotated)?.tokenId).toBe('cli');
    });

    it('keeps the old list when the new one is invalid', () => {
      const store = createTokenStore({ tokens: configured() });
      expect(() => store.replace([{ id: 'x', clientId: 'x', scopes: [] } as unknown as TokenConfig])).toThrow(
        expect.objectContaining({ code: 'INVALID_TOKEN_CONFIG' }),
      );
      expect(store.size).toBe(2);
      expect(store.authenticate(PLAIN)?.tokenId).toBe('cli');
    });

    it('empties the store and revokes everything for an empty list', () => {
      const store = createTokenStore({ tokens: configured() });
      const revoked = vi.fn();
      store.onRevoke(revoked);
      store.replace([]);
      expect(store.size).toBe(0);
      expect(revoked).toHaveBeenCalledTimes(2);
    });
  });
});

describe('createTokenStore source', () => {
  it('reads the persisted source back, so api-created tokens stay api after a restart', async () => {
    let saved: TokenConfig[] = [];
    const first = createTokenStore({
      persist: async (tokens) => {
        saved = tokens;
      },
    });
    await first.create({ scopes: ['rpc'], id: 'made' });
    const restarted = createTokenStore({ tokens: saved });
    expect(restarted.list()).toEqual([expect.objectContaining({ id: 'made', source: 'api' })]);
  });
});

describe('createTokenStore session tokens', () => {
  const HOUR = 3_600_000;

  it('keeps a session token in memory only, lists it with its expiry and renews it while in use', async () => {
    let clock = 10_000;
    const { store, persisted } = persistingStore({ now: () => clock });
    const created = await store.create({
      scopes: ['*'],
      clientId: 'console',
      id: 'console-1',
      sessionTtlMs: 8 * HOUR,
    });
    expect(created).toMatchObject({ id: 'console-1', expiresAt: 10_000 + 8 * HOUR });
    expect(persisted).toEqual([]);
    expect(store.list().find((token) => token.id === 'console-1')).toEqual({
      id: 'console-1',
      clientId: 'console',
      scopes: ['*'],
      createdAt: 10_000,
      source: 'session',
      expiresAt: 10_000 + 8 * HOUR,
    });
    // Used within its idle time, it lives on past its first expiry.
    clock += 7 * HOUR;
    expect(store.authenticate(created.token)?.tokenId).toBe('console-1');
    clock += 7 * HOUR;
    expect(store.touch('console-1')).toBe(true);
    expect(store.list().find((token) => token.id === 'console-1')?.expiresAt).toBe(clock + 8 * HOUR);
    // Left alone past its idle time, it is gone, and its sockets are told.
    const revoked: string[] = [];
    store.onRevoke((id) => revoked.push(id));
    clock += 8 * HOUR;
    expect(store.authenticate(created.token)).toBeNull();
    expect(revoked).toEqual(['console-1']);
    expect(store.list().map((token) => token.id)).toEqual(['cli', 'ops']);
  });

  it('expires on touch and in the list, revokes without persisting, and survives a config reload', async () => {
    let clock = 0;
    const { store, persisted } = persistingStore({ now: () => clock });
    await store.create({ scopes: ['rpc'], id: 's1', sessionTtlMs: HOUR });
    await store.create({ scopes: ['rpc'], id: 's2', sessionTtlMs: HOUR });
    const s3 = await store.create({ scopes: ['rpc'], id: 's3', sessionTtlMs: HOUR });
    store.replace(configured());
    expect(store.list().map((token) => token.id)).toEqual(['cli', 'ops', 's1', 's2', 's3']);
    await store.revoke('s3');
    expect(store.authenticate(s3.token)).toBeNull();
    expect(persisted).toEqual([]);
    clock = HOUR;
    expect(store.touch('s1')).toBe(false);
    expect(store.touch('cli')).toBe(true);
    expect(store.list().map((token) => token.id)).toEqual(['cli', 'ops']);
  });

  it('refuses a session time outside one second to one week', async () => {
    const store = createTokenStore();
    for (const sessionTtlMs of [0, 999, 8 * 24 * HOUR, 1.5]) {
      await expect(store.create({ scopes: ['rpc'], sessionTtlMs })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
      });
    }
  });
});
