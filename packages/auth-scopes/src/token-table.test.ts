import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Database, openDatabase } from '@agentd/storage';
import { freshPgDatabaseUrl, pgSuitesEnabled } from '@agentd/storage/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { openTokenTable } from './token-table.js';
import { hashToken } from './token-secret.js';
import type { TokenConfig } from './token-config.js';

const dir = mkdtempSync(join(tmpdir(), 'agentd-token-table-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function token(id: string, secret: string, extra: Partial<TokenConfig> = {}): TokenConfig {
  return {
    id,
    clientId: id,
    scopes: ['rpc'],
    tokenHash: hashToken(secret),
    createdAt: 1_700_000_000_000,
    ...extra,
  };
}

// The same suite on both dialects: one table, two instances' handles on it.
describe.each([
  ['libsql', async () => `file:${join(dir, `${Math.random().toString(36).slice(2)}.db`)}`],
  ...(pgSuitesEnabled() ? [['pg', () => freshPgDatabaseUrl('agentd_tokens')] as const] : []),
] as const)('auth_tokens on %s', (_dialect, makeUrl) => {
  async function twoHandles(): Promise<[Database, Database]> {
    const url = await makeUrl();
    return [await openDatabase({ url }), await openDatabase({ url })];
  }

  it('keeps hashes only, rows from two writers side by side, and deletes revoked ids', async () => {
    const [dbA, dbB] = await twoHandles();
    try {
      const [a, b] = [await openTokenTable(dbA), await openTokenTable(dbB)];
      await a.apply({ added: [token('ci', 'secret-ci-0123456789')], removed: [] });
      await b.apply({
        added: [token('bot', 'secret-bot-0123456789', { tenant: 'acme', sessionPrefixes: ['acme:support'] })],
        removed: [],
      });
      const listed = await a.list();
      expect(listed.map((entry) => entry.id).sort()).toEqual(['bot', 'ci']);
      expect(listed.find((entry) => entry.id === 'bot')).toEqual({
        id: 'bot',
        clientId: 'bot',
        scopes: ['rpc'],
        tokenHash: hashToken('secret-bot-0123456789'),
        createdAt: 1_700_000_000_000,
        source: 'api',
        tenant: 'acme',
        sessionPrefixes: ['acme:support'],
      });
      const raw = JSON.stringify(await dbA.query('SELECT * FROM auth_tokens'));
      expect(raw).not.toContain('secret-ci');
      await b.apply({ added: [], removed: ['ci'] });
      expect((await a.list()).map((entry) => entry.id)).toEqual(['bot']);
    } finally {
      await dbA.close();
      await dbB.close();
    }
  });

  it('accepts the same token twice (two instances bootstrapping), refuses another secret under an id or a secret under another id', async () => {
    const [dbA, dbB] = await twoHandles();
    try {
      const [a, b] = [await openTokenTable(dbA), await openTokenTable(dbB)];
      const admin = token('admin', 'the-admin-secret-0123456789', { scopes: ['*'] });
      await Promise.all([a.apply({ added: [admin], removed: [] }), b.apply({ added: [admin], removed: [] })]);
      expect((await a.list()).map((entry) => entry.id)).toEqual(['admin']);
      await expect(
        b.apply({ added: [token('admin', 'another-secret-0123456789')], removed: [] }),
      ).rejects.toMatchObject({ code: 'TOKEN_EXISTS', message: expect.stringMatching(/another secret/) });
      await expect(
        b.apply({ added: [token('copy', 'the-admin-secret-0123456789')], removed: ['admin'] }),
      ).resolves.toBeUndefined();
      // A malformed entry is refused before anything is written.
      await expect(
        b.apply({ added: [{ ...token('bad', 'bad-secret-0123456789'), scopes: [] }], removed: ['copy'] }),
      ).rejects.toThrow();
      // The delete and insert were one transaction: admin's row went, copy took its secret.
      expect((await a.list()).map((entry) => entry.id)).toEqual(['copy']);
      await expect(
        a.apply({ added: [token('third', 'the-admin-secret-0123456789')], removed: [] }),
      ).rejects.toMatchObject({
        code: 'TOKEN_EXISTS',
        message: expect.stringMatching(/'copy'.*with this secret/),
      });
    } finally {
      await dbA.close();
      await dbB.close();
    }
  });
});
