import { describe, expect, it } from 'vitest';
import { createAddressPolicy } from './address-policy.js';

describe('createAddressPolicy', () => {
  const names: Record<string, string[]> = {
    'public.test': ['93.184.216.34'],
    'intranet.test': ['10.0.0.7'],
    'mixed.test': ['93.184.216.34', '192.168.0.10'],
  };
  const policy = createAddressPolicy({
    allowedHosts: ['wiki.test', '127.0.0.1:8080'],
    resolveHost: async (host) => names[host] ?? (host === 'wiki.test' ? ['10.9.9.9'] : []),
  });

  it('checks every resolved address of a name and connects to a checked one', async () => {
    expect(await policy.check('public.test', 443)).toEqual({ allowed: true, address: '93.184.216.34' });
    expect(await policy.check('intranet.test', 80)).toEqual({
      allowed: false,
      reason: 'intranet.test resolves to 10.0.0.7, a private address',
    });
    expect(await policy.check('mixed.test', 80)).toMatchObject({ allowed: false });
    expect(await policy.check('nowhere.test', 80)).toMatchObject({ allowed: false, unresolved: true });
  });

  it('classifies literal addresses, bracketed IPv6 included', async () => {
    expect(await policy.check('[::1]', 80)).toEqual({ allowed: false, reason: '::1 is a loopback address' });
    expect(await policy.check('169.254.169.254', 80)).toMatchObject({ allowed: false });
    expect(await policy.check('93.184.216.34', 80)).toEqual({ allowed: true, address: '93.184.216.34' });
  });

  it('exempts allowed hosts, by name or by name and port', async () => {
    expect(await policy.check('wiki.test', 80)).toEqual({ allowed: true, address: '10.9.9.9' });
    expect(await policy.check('127.0.0.1', 8080)).toEqual({ allowed: true, address: '127.0.0.1' });
    expect(await policy.check('127.0.0.1', 8081)).toMatchObject({ allowed: false });
  });
});
