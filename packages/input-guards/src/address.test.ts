import { describe, expect, it } from 'vitest';
import { bareHost, createAddressPolicy, isLocalUrl, nonPublicRange } from './address.js';

describe('nonPublicRange', () => {
  it('names every non-public range and lets public unicast through', () => {
    const ranges: Array<[address: string, range: string | undefined]> = [
      ['127.0.0.1', 'loopback'],
      ['10.1.2.3', 'private'],
      ['172.16.0.1', 'private'],
      ['192.168.1.1', 'private'],
      ['169.254.169.254', 'link-local'],
      ['0.0.0.0', 'unspecified'],
      ['100.64.0.1', 'carrier-grade NAT'],
      ['100.127.255.254', 'carrier-grade NAT'],
      ['224.0.0.1', 'multicast'],
      ['255.255.255.255', 'broadcast'],
      ['::1', 'loopback'],
      ['::', 'unspecified'],
      ['fe80::1', 'link-local'],
      ['fe90::1', 'link-local'],
      ['febf:ffff::1', 'link-local'],
      ['fd00::1', 'unique-local'],
      ['fc00::1', 'unique-local'],
      ['::ffff:127.0.0.1', 'loopback'],
      ['::ffff:10.0.0.1', 'private'],
      ['::ffff:a00:1', 'private'],
      ['::ffff:100.64.0.1', 'carrier-grade NAT'],
      ['2002:a00:1::1', '6to4'],
      ['64:ff9b::a00:1', 'NAT64'],
      ['not an address', 'non-IP'],
      ['127.1', 'non-IP'],
      ['93.184.216.34', undefined],
      ['100.128.0.1', undefined],
      ['::ffff:93.184.216.34', undefined],
      ['2606:4700::1111', undefined],
    ];
    for (const [address, range] of ranges) expect(nonPublicRange(address), address).toBe(range);
  });
});

describe('isLocalUrl', () => {
  it('tells URLs of this machine or a private network from public ones, resolving nothing', () => {
    const local = [
      'http://localhost:8000/v1',
      'http://api.localhost/v1',
      'http://gpu-box.local/v1',
      'http://[::ffff:10.0.0.5]:8000/v1',
      'http://100.64.1.2/v1',
      'http://[fe90::1]/v1',
      'http://0.0.0.0/v1',
      'http://LOCALHOST./v1',
    ];
    const remote = ['https://api.openai.com/v1', 'http://8.8.8.8/', 'http://[2606:4700::1111]/', 'not a url'];
    expect(local.filter(isLocalUrl)).toEqual(local);
    expect(remote.filter(isLocalUrl)).toEqual([]);
  });
});

describe('bareHost', () => {
  it('drops IPv6 brackets, case and a trailing dot', () => {
    expect(bareHost('[::1]')).toBe('::1');
    expect(bareHost('Example.COM.')).toBe('example.com');
  });
});

describe('createAddressPolicy', () => {
  const names: Record<string, string[]> = {
    'public.test': ['93.184.216.34'],
    'intranet.test': ['10.0.0.7'],
    'mapped.test': ['::ffff:10.0.0.7'],
    'mixed.test': ['93.184.216.34', '192.168.0.10'],
    'wiki.test': ['10.9.9.9'],
  };
  const resolveHost = async (host: string) => names[host] ?? [];
  const policy = createAddressPolicy({ allowedHosts: ['wiki.test', '127.0.0.1:8080'], resolveHost });

  it('checks every resolved address of a name and connects to a checked one', async () => {
    expect(await policy('public.test', 443)).toEqual({ allowed: true, address: '93.184.216.34' });
    expect(await policy('intranet.test', 80)).toEqual({
      allowed: false,
      reason: 'intranet.test resolves to 10.0.0.7, a private address',
    });
    expect(await policy('mapped.test', 80)).toMatchObject({ allowed: false });
    expect(await policy('mixed.test', 80)).toMatchObject({ allowed: false });
    expect(await policy('nowhere.test', 80)).toMatchObject({ allowed: false, unresolved: true });
  });

  it('classifies literal addresses, bracketed IPv6 included', async () => {
    expect(await policy('[::1]', 80)).toEqual({ allowed: false, reason: '::1 is a loopback address' });
    expect(await policy('[::ffff:a00:1]', 80)).toMatchObject({ allowed: false });
    expect(await policy('93.184.216.34', 80)).toEqual({ allowed: true, address: '93.184.216.34' });
  });

  it('exempts allowed hosts by name or name and port, and everything with allowPrivateNetwork', async () => {
    expect(await policy('wiki.test', 80)).toEqual({ allowed: true, address: '10.9.9.9' });
    expect(await policy('127.0.0.1', 8080)).toEqual({ allowed: true, address: '127.0.0.1' });
    expect(await policy('127.0.0.1', 8081)).toMatchObject({ allowed: false });
    const open = createAddressPolicy({ allowPrivateNetwork: true, resolveHost });
    expect(await open('intranet.test', 80)).toEqual({ allowed: true, address: '10.0.0.7' });
    expect(await open('nowhere.test', 80)).toMatchObject({ allowed: false, unresolved: true });
  });
});
