import { describe, expect, it, vi } from 'vitest';
import { ensureBootstrapToken } from './bootstrap.js';
import type { AuthScopesLogger } from './logger.js';
import type { TokenConfig } from './token-config.js';
import { hashToken } from './token-secret.js';
import { createTokenStore } from './token-store.js';

function recordingLogger() {
  const lines: unknown[][] = [];
  const record = (...args: unknown[]) => {
    lines.push(args);
  };
  const logger: AuthScopesLogger = { debug: record, info: record, warn: record, error: record };
  return { logger, lines };
}

describe('ensureBootstrapToken', () => {
  it('generates a * token, prints its secret once with a usage line, and stores only the hash', async () => {
    const persisted: TokenConfig[][] = [];
    const store = createTokenStore({
      now: () => 7,
      persist: async (tokens) => {
        persisted.push(tokens);
      },
    });
    const printed: string[] = [];
    const { logger, lines } = recordingLogger();
    const result = await ensureBootstrapToken({
      store,
      env: {},
      print: (line) => printed.push(line),
      logger,
    });
    expect(result).toEqual({ action: 'generated', tokenId: 'admin' });

    const secrets = printed.filter((line) => /^agd_[A-Za-z0-9_-]{43}$/.test(line));
    expect(secrets).toHaveLength(1);
    const secret = secrets[0] as string;
    expect(printed.join('\n')).toContain('Authorization: Bearer <token>');
    expect(printed.join('\n')).toContain('agentd call system.ping');
    expect(printed.filter((line) => line.includes(secret))).toHaveLength(1);

    expect(store.authenticate(secret)).toEqual({ tokenId: 'admin', clientId: 'admin', scopes: ['*'] });
    expect(persisted).toEqual([
      [
        {
          id: 'admin',
          clientId: 'admin',
          scopes: ['*'],
          source: 'api',
          tokenHash: hashToken(secret),
          createdAt: 7,
        },
      ],
    ]);
    expect(JSON.stringify(lines)).not.toContain(secret);
  });

  it('does nothing on a second call', async () => {
    const store = createTokenStore();
    const printed: string[] = [];
    const print = (line: string) => printed.push(line);
    await ensureBootstrapToken({ store, env: {}, print });
    const count = printed.length;
    const again = await ensureBootstrapToken({ store, env: {}, print });
    expect(again).toEqual({ action: 'none', tokenCount: 1 });
    expect(printed).toHaveLength(count);
    expect(store.size).toBe(1);
  });

  it('stores AGENTD_ADMIN_TOKEN hashed as the * token admin without printing it', async () => {
    const persisted: TokenConfig[][] = [];
    const store = createTokenStore({
      persist: async (tokens) => {
        persisted.push(tokens);
      },
    });
    const print = vi.fn();
    const adminSecret = 'operator-chosen-secret-0123456789';
    const { logger, lines } = recordingLogger();
    const result = await ensureBootstrapToken({
      store,
      env: { AGENTD_ADMIN_TOKEN: adminSecret },
      print,
      logger,
    });
    expect(result).toEqual({ action: 'env', tokenId: 'admin' });
    expect(print).not.toHaveBeenCalled();
    expect(store.authenticate(adminSecret)).toEqual({ tokenId: 'admin', clientId: 'admin', scopes: ['*'] });
    expect(persisted.at(-1)?.[0]?.tokenHash).toBe(hashToken(adminSecret));
    expect(JSON.stringify(persisted)).not.toContain(adminSecret);
    expect(JSON.stringify(lines)).not.toContain(adminSecret);

    const again = await ensureBootstrapToken({ store, env: { AGENTD_ADMIN_TOKEN: 'another-value' }, print });
    expect(again.action).toBe('none');
    expect(store.authenticate('another-value')).toBeNull();
  });

  it('warns about a short AGENTD_ADMIN_TOKEN without logging it', async () => {
    const store = createTokenStore();
    const { logger, lines } = recordingLogger();
    await ensureBootstrapToken({ store, env: { AGENTD_ADMIN_TOKEN: 'short' }, print: vi.fn(), logger });
    expect(store.authenticate('short')?.tokenId).toBe('admin');
    expect(lines.some((line) => String(line[1]).includes('short and may be guessable'))).toBe(true);
    expect(lines.some((line) => JSON.stringify(line[0]).includes('"short"'))).toBe(false);
  });

  it('treats a blank AGENTD_ADMIN_TOKEN as unset', async () => {
    const store = createTokenStore();
    const printed: string[] = [];
    const result = await ensureBootstrapToken({
      store,
      env: { AGENTD_ADMIN_TOKEN: '   ' },
      print: (line) => printed.push(line),
    });
    expect(result.action).toBe('generated');
    expect(printed.length).toBeGreaterThan(0);
  });

  it('leaves configured tokens alone', async () => {
    const store = createTokenStore({ tokens: [{ id: 'cli', clientId: 'cli', scopes: ['rpc'], token: 'x' }] });
    const print = vi.fn();
    const result = await ensureBootstrapToken({ store, env: { AGENTD_ADMIN_TOKEN: 'y' }, print });
    expect(result).toEqual({ action: 'none', tokenCount: 1 });
    expect(print).not.toHaveBeenCalled();
    expect(store.authenticate('y')).toBeNull();
  });

  it('prints nothing and propagates PERSIST_FAILED when the token cannot be saved', async () => {
    const store = createTokenStore({
      persist: async () => {
        throw new Error('no space left');
      },
    });
    const print = vi.fn();
    await expect(ensureBootstrapToken({ store, env: {}, print })).rejects.toMatchObject({
      code: 'PERSIST_FAILED',
    });
    expect(print).not.toHaveBeenCalled();
    expect(store.size).toBe(0);
  });

  it('accepts process.env itself', async () => {
    const store = createTokenStore();
    const previous = process.env.AGENTD_ADMIN_TOKEN;
    process.env.AGENTD_ADMIN_TOKEN = 'from-the-real-environment-0123456789';
    try {
      const result = await ensureBootstrapToken({ store, env: process.env, print: vi.fn() });
      expect(result).toEqual({ action: 'env', tokenId: 'admin' });
      expect(store.authenticate('from-the-real-environment-0123456789')?.tokenId).toBe('admin');
    } finally {
      if (previous === undefined) delete process.env.AGENTD_ADMIN_TOKEN;
      else process.env.AGENTD_ADMIN_TOKEN = previous;
    }
  });

  it('refuses options without a store with INVALID_OPTIONS', async () => {
    await expect(
      ensureBootstrapToken({ env: {}, print: vi.fn() } as unknown as Parameters<
        typeof ensureBootstrapToken
      >[0]),
    ).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
  });

  it('uses a custom usage hint', async () => {
    const store = createTokenStore();
    const printed: string[] = [];
    await ensureBootstrapToken({
      store,
      env: {},
      print: (line) => printed.push(line),
      usageHint: 'export AGENTD_TOKEN=<token>',
    });
    expect(printed.at(-1)).toBe('export AGENTD_TOKEN=<token>');
  });
});
