import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Resolves a host name to every address it has (IPv4 and IPv6, as the resolver orders them). */
export type ResolveHost = (hostname: string) => Promise<string[]>;

/** The outcome of checking one host: the address to connect to, or why not. */
export type HostDecision =
  | { allowed: true; address: string }
  | { allowed: false; reason: string; unresolved?: true };

/** Names of ipaddr.js ranges as they read in an error message. */
const RANGE_LABELS: Record<string, string> = {
  linkLocal: 'link-local',
  uniqueLocal: 'unique-local',
  carrierGradeNat: 'carrier-grade NAT',
  ipv4Mapped: 'IPv4-mapped',
  rfc6052: 'NAT64',
  rfc6145: 'IPv4-translated',
  '6to4': '6to4',
};

/**
 * The range of a non-public address as it reads in a message (`loopback`, `private`,
 * `link-local`, `carrier-grade NAT`…), or `undefined` for public unicast. Text that is no IP
 * address in standard notation reads `non-IP` (refused, never passed). Everything but public unicast counts: loopback, private, link-local,
 * carrier-grade NAT, `0.0.0.0` (which reaches the local host on Linux), multicast, broadcast,
 * reserved ranges, and the IPv6 forms that embed an IPv4 address (6to4, NAT64, translated),
 * which could smuggle a private one. An IPv4-mapped IPv6 address (`::ffff:10.0.0.1`) is judged
 * as the IPv4 address it carries. Classified by `ipaddr.js`.
 */
export function nonPublicRange(address: string): string | undefined {
  if (isIP(address) === 0) return 'non-IP';
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  const range = parsed.range();
  return range === 'unicast' ? undefined : (RANGE_LABELS[range] ?? range);
}

/** `[::1]` → `::1` (URL host names keep the brackets of IPv6 literals), lower case, no trailing dot. */
export function bareHost(hostname: string): string {
  const lower = hostname.toLowerCase();
  const bare = lower.startsWith('[') && lower.endsWith(']') ? lower.slice(1, -1) : lower;
  return bare.replace(/\.$/, '');
}

/**
 * Whether a URL's host is this machine or a network that is not the public internet: a
 * `localhost` name (`localhost`, `*.localhost`), an mDNS `*.local` name, or a literal
 * address {@link nonPublicRange} refuses. No name is resolved. `false` for a URL that does
 * not parse.
 */
export function isLocalUrl(url: string): boolean {
  let host: string;
  try {
    host = bareHost(new URL(url).hostname);
  } catch {
    return false;
  }
  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local')) return true;
  return isIP(host) !== 0 && nonPublicRange(host) !== undefined;
}

const defaultResolve: ResolveHost = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

/** Options of {@link createAddressPolicy}. */
export interface AddressPolicyOptions {
  /** Skips the classification (addresses are still resolved once and pinned). @default false */
  allowPrivateNetwork?: boolean | undefined;
  /** `host` or `host:port` (`[v6]:port`) entries exempt from the classification. @default [] */
  allowedHosts?: readonly string[] | undefined;
  /** Host resolution. @default `dns.lookup` with `all: true` */
  resolveHost?: ResolveHost | undefined;
}

/**
 * The private-network guard of every outbound fetch a caller steers (browser pages, media
 * links): a literal address is classified as it is; a name is resolved once and refused when
 * any of its addresses is non-public (a name with one public and one private address could
 * otherwise be steered to the private one). The decision names the checked address to
 * connect to (DNS pinning), so a second resolution cannot swap in another.
 */
export function createAddressPolicy(
  options: AddressPolicyOptions = {},
): (hostname: string, port: number) => Promise<HostDecision> {
  const resolve = options.resolveHost ?? defaultResolve;
  const allowed = new Set((options.allowedHosts ?? []).map((entry) => entry.toLowerCase()));
  const exempt = (host: string, port: number) =>
    options.allowPrivateNetwork === true ||
    allowed.has(host) ||
    allowed.has(`${host}:${port}`) ||
    allowed.has(`[${host}]:${port}`);
  return async (hostname, port) => {
    const host = bareHost(hostname);
    if (isIP(host)) {
      const range = exempt(host, port) ? undefined : nonPublicRange(host);
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
    if (!exempt(host, port)) {
      for (const address of addresses) {
        const range = nonPublicRange(address);
        if (range !== undefined) {
          return { allowed: false, reason: `${host} resolves to ${address}, a ${range} address` };
        }
      }
    }
    return { allowed: true, address: addresses[0] as string };
  };
}
