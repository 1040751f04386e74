import { createAddressPolicy as createHostCheck, type HostDecision } from '@agentd/input-guards';
import type { ResolveHost } from '../options.js';

export type { HostDecision };

/** Decides whether the browser may reach a host, after resolving it. */
export interface AddressPolicy {
  check(hostname: string, port: number): Promise<HostDecision>;
}

/**
 * The policy for `allowPrivateNetwork: false`: `@agentd/input-guards`' address policy (the one
 * rule of every guarded fetch: literal addresses classified, names resolved and refused when
 * any address is non-public, the checked address pinned). `allowedHosts` entries (`host` or
 * `host:port`) skip the classification.
 */
export function createAddressPolicy(options: {
  allowedHosts: readonly string[];
  resolveHost?: ResolveHost | undefined;
}): AddressPolicy {
  return { check: createHostCheck(options) };
}
