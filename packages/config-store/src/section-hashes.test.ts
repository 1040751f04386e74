import { describe, expect, it } from 'vitest';
import { sectionHashes } from './section-hashes.js';

describe('sectionHashes', () => {
  const config = {
    gateway: {
      port: 7777,
      host: '127.0.0.1',
      tokens: [{ id: 'admin', scopes: ['*'], tokenHash: 'sha256:aa', createdAt: 1 }],
    },
    cron: { enabled: true, maxConcurrent: 2 },
    storage: { url: 'postgres://db/agentd' },
  };

  it('hashes each section apart, whatever the key order', () => {
    const reordered = {
      cron: { maxConcurrent: 2, enabled: true },
      gateway: config.gateway,
      storage: config.storage,
    };
    const hashes = sectionHashes(config);
    expect(Object.keys(hashes)).toEqual(['cron', 'gateway', 'storage']);
    expect(hashes.cron).toMatch(/^[0-9a-f]{64}$/);
    expect(sectionHashes(reordered)).toEqual(hashes);
    expect(sectionHashes({ ...config, cron: { enabled: false, maxConcurrent: 2 } }).cron).not.toBe(
      hashes.cron,
    );
  });

  it('leaves out whole sections, keys and per-item keys named in omit', () => {
    const omit = ['storage', 'gateway.port', 'gateway.tokens.*.createdAt'];
    const elsewhere = {
      ...config,
      gateway: { ...config.gateway, port: 8888, tokens: [{ ...config.gateway.tokens[0], createdAt: 2 }] },
      storage: { url: 'postgres://other/agentd' },
    };
    expect(sectionHashes(elsewhere, { omit })).toEqual(sectionHashes(config, { omit }));
    expect(sectionHashes(config, { omit }).storage).toBeUndefined();
    // What is not omitted still counts: another token scope is another gateway hash.
    const otherScope = {
      ...config,
      gateway: { ...config.gateway, tokens: [{ ...config.gateway.tokens[0], scopes: ['rpc'] }] },
    };
    expect(sectionHashes(otherScope, { omit }).gateway).not.toBe(sectionHashes(config, { omit }).gateway);
    // The input is not changed.
    expect(config.gateway.tokens[0]?.createdAt).toBe(1);
  });

  it('treats hostile keys as plain data', () => {
    const hostile = JSON.parse('{"agents":{"__proto__":{"x":1},"constructor":"y"}}') as Record<
      string,
      unknown
    >;
    const hashes = sectionHashes(hostile, { omit: ['agents.__proto__'] });
    expect(hashes.agents).toBe(sectionHashes({ agents: { constructor: 'y' } }).agents);
  });
});
