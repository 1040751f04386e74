import { describe, expect, it } from 'vitest';
import { tokenConfigSchema } from './token-config.js';
import { hashToken } from './token-secret.js';
import { createTokenStore } from './token-store.js';
import { allowsSession } from './tenancy.js';

describe('allowsSession', () => {
  it('lets an unbound caller reach every session and a bound one only its tenant and prefixes', () => {
    expect(allowsSession(undefined, 'acme:chat:alice')).toBe(true);
    const acme = { tenant: 'acme' };
    expect(allowsSession(acme, 'acme:chat:alice')).toBe(true);
    expect(allowsSession(acme, 'acmex:chat:alice')).toBe(false);
    expect(allowsSession(acme, 'other:chat:alice')).toBe(false);
    const alice = { tenant: 'acme', sessionPrefixes: ['acme:chat:alice'] };
    expect(allowsSession(alice, 'acme:chat:alice')).toBe(true);
    expect(allowsSession(alice, 'acme:chat:bob')).toBe(false);
  });

  it('matches session prefixes by whole key segments', () => {
    const bob = { tenant: 'globex', sessionPrefixes: ['globex:chat:bob'] };
    expect(allowsSession(bob, 'globex:chat:bob')).toBe(true);
    expect(allowsSession(bob, 'globex:chat:bob:thread-1')).toBe(true);
    expect(allowsSession(bob, 'globex:chat:bobby')).toBe(false);
    expect(allowsSession(bob, 'globex:chat:bo')).toBe(false);
    // A prefix ending in ':' ends on a segment boundary already.
    const chats = { tenant: 'globex', sessionPrefixes: ['globex:chat:'] };
    expect(allowsSession(chats, 'globex:chat:anyone')).toBe(true);
    expect(allowsSession(chats, 'globex:chatter:x')).toBe(false);
  });
});

describe('tenant-bound tokens', () => {
  it('carry their binding from create to authenticate, list and the persisted config', async () => {
    const saved: unknown[] = [];
    const store = createTokenStore({ persist: async (tokens) => void saved.push(tokens) });
    const created = await store.create({
      scopes: ['rpc'],
      id: 'alice',
      tenant: 'acme',
      sessionPrefixes: ['acme:chat:alice'],
    });
    expect(created).toMatchObject({ tenant: 'acme', sessionPrefixes: ['acme:chat:alice'] });
    expect(store.authenticate(created.token)).toEqual({
      tokenId: 'alice',
      clientId: 'alice',
      scopes: ['rpc'],
      tenant: 'acme',
      sessionPrefixes: ['acme:chat:alice'],
    });
    expect(store.list()[0]).toMatchObject({ tenant: 'acme' });
    expect(saved.at(-1)).toEqual([expect.objectContaining({ id: 'alice', tenant: 'acme' })]);
    const unbound = await store.create({ scopes: ['rpc'], id: 'plain' });
    expect(store.authenticate(unbound.token)).toEqual({
      tokenId: 'plain',
      clientId: 'plain',
      scopes: ['rpc'],
    });
  });

  it('refuses admin reach, prefixes without a tenant and prefixes outside it', async () => {
    const store = createTokenStore();
    for (const request of [
      { scopes: ['admin' as const], tenant: 'acme' },
      { scopes: ['rpc' as const], sessionPrefixes: ['acme:'] },
      { scopes: ['rpc' as const], tenant: 'acme', sessionPrefixes: ['other:x'] },
    ]) {
      await expect(store.create(request)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    }
    const config = { id: 'x', clientId: 'x', scopes: ['*'], tokenHash: hashToken('s'), tenant: 'acme' };
    expect(tokenConfigSchema.safeParse(config).success).toBe(false);
  });
});
