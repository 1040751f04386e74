import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { ResolveHost } from '../options.js';

/** The outcome of checking one host: the address to connect to, or why not. */
export type HostDecision = { allowed: true; address: string } | { allowed: false; reason: string };

/**
 * Why `address` may not be reached, or undefined when it is public unicast. Everything but
 * public unicast is refused: loopback, private, link-local, `0.0.0.0`, multicast, and IPv6
 * forms that embed an IPv4 address (mapped, 6to4, NAT64) which could smuggle a private one.
 * The same rule as the browser package's guard.
 */
export function blockedRange(address: string): string | undefined {
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  const range = parsed.range();
  return range === 'unicast' ? undefined : range;
}

const defaultResolve: ResolveHost = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

/**
 * Checks a host before every connection (first request and each redirect hop): literal
 * addresses are classified, names resolved once and refused when any address is non-public.
 * The connection then goes to the checked address (DNS pinning), so a second resolution
 * cannot swap in a private one. `allowPrivateNetwork` skips the classification but still pins.
 */
export function createAddressPolicy(options: {
  allowPrivateNetwork: boolean;
  allowedHosts: readonly string[];
  resolveHost?: ResolveHost | undefined;
}): (hostname: string, port: number) => Promise<HostDecision> {
  const resolve = options.resolveHost ?? defaultResolve;
  const allowed = new Set(options.allowedHosts.map((entry) => entry.toLowerCase()));
  const exempt = (host: string, port: number) =>
    options.allowPrivateNetwork ||
    allowed.has(host) ||
    allowed.has(`${host}:${port}`) ||
    allowed.has(`[${host}]:${port}`);
  return async (hostname, port) => {
    const raw = hostname.toLowerCase();
    const host = (raw.startsWith('[') && raw.endsWith(']') ? raw.slice(1, -1) : raw).replace(/\.$/, '');
    let addresses: string[];
    if (isIP(host)) addresses = [host];
    else {
      try {
        addresses = await resolve(host);
      } catch {
        addresses = [];
      }
    }
    if (addresses.length === 0) return { allowed: false, reason: `${host} could not be resolved` };
    if (!exempt(host, port)) {
      for (const address of addresses) {
        const range = blockedRange(address);
        if (range !== undefined)
          return { allowed: false, reason: `${host} resolves to ${address}, a ${range} address` };
      }
    }
    return { allowed: true, address: addresses[0] as string };
  };
}
