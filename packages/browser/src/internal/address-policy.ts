import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { ResolveHost } from '../options.js';

/** The outcome of checking one host: where to connect, or why not. */
export type HostDecision =
  | { allowed: true; address: string }
  | { allowed: false; reason: string; unresolved?: boolean };

/** Decides whether the browser may reach a host, after resolving it. */
export interface AddressPolicy {
  check(hostname: string, port: number): Promise<HostDecision>;
}

/** Names of ipaddr.js ranges as they read in an error message. */
const rangeLabels: Record<string, string> = {
  linkLocal: 'link-local',
  uniqueLocal: 'unique-local',
  carrierGradeNat: 'carrier-grade NAT',
  ipv4Mapped: 'IPv4-mapped',
  rfc6052: 'NAT64',
  rfc6145: 'IPv4-translated',
  '6to4': '6to4',
};

/**
 * Why `address` may not be reached, or undefined when it is public unicast. Anything but
 * public unicast is refused: besides loopback, private and link-local this covers
 * `0.0.0.0` (which reaches the local host on Linux), multicast, broadcast and the
 * IPv6 forms that embed an IPv4 address (6to4, NAT64), which could smuggle a private one.
 */
export function blockedRange(address: string): string | undefined {
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  const range = parsed.range();
  if (range === 'unicast') return undefined;
  return rangeLabels[range] ?? range;
}

/** `[::1]` → `::1`; URL hostnames keep the brackets of IPv6 literals. */
export function bareHost(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

const defaultResolve: ResolveHost = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

/**
 * The policy for `allowPrivateNetwork: false`: literal addresses are classified directly,
 * names are resolved and refused when any of their addresses is non-public (a name with
 * one public and one private address could otherwise be steered to the private one).
 * `allowedHosts` entries (`host` or `host:port`) skip the classification.
 */
export function createAddressPolicy(options: {
  allowedHosts: readonly string[];
  resolveHost?: ResolveHost | undefined;
}): AddressPolicy {
  const resolve = options.resolveHost ?? defaultResolve;
  const allowed = new Set(options.allowedHosts.map((entry) => entry.toLowerCase()));
  const isAllowed = (host: string, port: number) =>
    allowed.has(host) || allowed.has(`${host}:${port}`) || allowed.has(`[${host}]:${port}`);

  return {
    async check(hostname, port) {
      const host = bareHost(hostname.toLowerCase()).replace(/\.$/, '');
      if (isIP(host)) {
        if (isAllowed(host, port)) return { allowed: true, address: host };
        const range = blockedRange(host);
        return range === undefined
          ? { allowed: true, address: host }
          : { allowed: false, reason: `${host} is a ${range} address` };
      }
      let addresses: string[];
      try {
        addresses = await resolve(host);
      } catch {
        addresses = [];
      }
      if (addresses.length === 0) {
        return { allowed: false, reason: `${host} could not be resolved`, unresolved: true };
      }
      if (!isAllowed(host, port)) {
        for (const address of addresses) {
          const range = blockedRange(address);
          if (range !== undefined) {
            return { allowed: false, reason: `${host} resolves to ${address}, a ${range} address` };
          }
        }
      }
      return { allowed: true, address: addresses[0] as string };
    },
  };
}
