import { describe, expect, it } from 'vitest';
import { blockedRange, createAddressPolicy } from './address-policy.js';

describe('blockedRange', () => {
  it('names every non-public range and lets public unicast through', () => {
    const ranges: Array<[address: string, range: string | undefined]> = [
      ['127.0.0.1', 'loopback'],
      ['10.1.2.3', 'private'],
      ['172.16.0.1', 'private'],
      ['192.168.1.1', 'private'],
      ['169.254.169.254', 'link-local'],
      ['0.0.0.0', 'unspecified'],
      ['100.64.0.1', 'carrier-grade NAT'],
      ['::1', 'loopback'],
      ['fe80::1', 'link-local'],
      ['fd00::1', 'unique-local'],
      ['::ffff:127.0.0.1', 'loopback'],
      ['::ffff:10.0.0.1', 'private'],
      ['93.184.216.34', undefined],
      ['2606:4700::1111', undefined],
    ];
    for (const [address, range] of ranges) expect(blockedRange(address), address).toBe(range);
  });
});

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
