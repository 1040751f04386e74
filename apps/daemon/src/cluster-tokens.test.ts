import { createTokenStore, type TokenConfig, type TokenStore } from '@agentd/auth-scopes';
import { noopLogger } from '@agentd/logging';
import { type Coordinator, type Database, openCoordination, openDatabase } from '@agentd/storage';
import { freshPgDatabaseUrl, pgSuitesEnabled } from '@agentd/storage/testing';
import { eventually } from '@agentd/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import { openClusterTokens } from './cluster-tokens.js';

const opened: Array<{ close(): Promise<void> | void }> = [];
afterEach(async () => {
  for (const handle of opened.splice(0).reverse()) await handle.close();
});

/** One instance: its own pool and coordinator on the shared database, a token store persisting to the table. */
async function instance(url: string, id: string, configured: TokenConfig[] = []) {
  const db: Database = await openDatabase({ url, poolMax: 3 });
  opened.push(db);
  const coordinator: Coordinator = await openCoordination(db, { instanceId: id, pollMs: 200 });
  await coordinator.start();
  opened.push(coordinator);
  const clusterTokens = await openClusterTokens({
    db,
    coordinator,
    configuredIds: () => new Set(configured.map((entry) => entry.id)),
    log: noopLogger,
  });
  const store: TokenStore = createTokenStore({
    tokens: clusterTokens.withStored(configured),
    persist: clusterTokens.persist,
  });
  opened.push({ close: clusterTokens.follow(store, async () => configured) });
  const revoked: string[] = [];
  store.onRevoke((tokenId) => revoked.push(tokenId));
  return { store, revoked };
}

describe.skipIf(!pgSuitesEnabled())('cluster tokens (auth_tokens on PostgreSQL)', () => {
  it('a token made on A works on B; revoked on B, A drops it and closes its sockets', async () => {
    const url = await freshPgDatabaseUrl('agentd_ctokens');
    const a = await instance(url, 'a');
    const b = await instance(url, 'b');
    const created = await a.store.create({ scopes: ['rpc'], clientId: 'dash' });
    await eventually(() => b.store.authenticate(created.token) ?? undefined);
    expect(b.store.list().find((entry) => entry.id === created.id)?.source).toBe('api');
    // A third instance starting now reads it from the table.
    const c = await instance(url, 'c');
    expect(c.store.authenticate(created.token)?.clientId).toBe('dash');

    await b.store.revoke(created.id);
    await eventually(() => (a.revoked.includes(created.id) ? true : undefined));
    expect(a.store.authenticate(created.token)).toBeNull();
    await eventually(() => (c.store.authenticate(created.token) === null ? true : undefined));
  });

  it('keeps both tokens when two instances create at once, and refuses revoking a config.yaml token', async () => {
    const url = await freshPgDatabaseUrl('agentd_ctokens');
    const configured: TokenConfig[] = [
      { id: 'ops', clientId: 'ops', scopes: ['admin'], token: 'ops-secret-0123456789abcdef' },
    ];
    const a = await instance(url, 'a', configured);
    const b = await instance(url, 'b', configured);
    const [one, two] = await Promise.all([
      a.store.create({ scopes: ['rpc'] }),
      b.store.create({ scopes: ['rpc'] }),
    ]);
    for (const store of [a.store, b.store]) {
      await eventually(() =>
        store.authenticate(one.token) && store.authenticate(two.token) ? true : undefined,
      );
    }
    await expect(a.store.revoke('ops')).rejects.toMatchObject({
      code: 'PERSIST_FAILED',
    });
    expect(a.store.authenticate('ops-secret-0123456789abcdef')?.tokenId).toBe('ops');
  });
});
