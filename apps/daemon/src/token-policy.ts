import { isSecretRef } from '@agentd/config-store';
import { RpcError } from '@agentd/rpc-core';

/**
 * Refuses config writes over RPC that would put a plaintext token into `gateway.tokens`
 * (and so into the git history of config.yaml for good). Tokens are created with
 * `tokens.create` (hash only) or named as `${secret:NAME}`; an entry already in the config
 * may be written back unchanged.
 */
export function plaintextTokenGuard(current: () => Array<{ id: string; token?: string | undefined }>) {
  return (candidate: Record<string, unknown>): void => {
    const gateway = candidate.gateway;
    if (typeof gateway !== 'object' || gateway === null) return;
    const list = (gateway as { tokens?: unknown }).tokens;
    if (!Array.isArray(list)) return;
    const existing = new Map(current().map((entry) => [entry.id, entry.token]));
    list.forEach((entry, index) => {
      if (typeof entry !== 'object' || entry === null) return;
      const { id, token } = entry as { id?: unknown; token?: unknown };
      if (typeof token !== 'string' || isSecretRef(token)) return;
      if (typeof id === 'string' && existing.get(id) === token) return;
      const message =
        'plaintext tokens cannot be written over RPC; use tokens.create (stores only a hash) or a ${secret:NAME} reference';
      throw RpcError.invalidParams(`Invalid params: gateway.tokens.${index}.token: ${message}`, [
        { path: ['gateway', 'tokens', index, 'token'], code: 'custom', message },
      ]);
    });
  };
}

/**
 * Refuses config writes over RPC that would leave no token with admin reach (`admin` or `*`):
 * every later call would get 401 until a restart. `tokens.revoke` refuses the same unless
 * forced; a config write has no such escape, so it is refused. `mode` says how the candidate
 * applies: `merge` (patch, set: an absent `gateway.tokens` leaves the list as it is, `null`
 * empties it) or `replace` (apply: an absent list is the empty default).
 */
export function adminReachGuard() {
  return (candidate: Record<string, unknown>, mode: 'merge' | 'replace'): void => {
    const gateway = candidate.gateway;
    // In a merge, `gateway: null` removes the whole section, tokens included.
    if (mode === 'merge' && gateway === undefined) return;
    const hasGateway = typeof gateway === 'object' && gateway !== null;
    const given = hasGateway ? (gateway as { tokens?: unknown }).tokens : undefined;
    if (mode === 'merge' && hasGateway && given === undefined) return;
    const tokens = Array.isArray(given) ? given : [];
    const reachesAdmin = tokens.some((entry) => {
      const scopes = (entry as { scopes?: unknown } | null)?.scopes;
      return Array.isArray(scopes) && (scopes.includes('admin') || scopes.includes('*'));
    });
    if (reachesAdmin) return;
    const message =
      'the write would leave no token with admin or * scope, locking every admin caller out; keep one (tokens.revoke {force: true} removes the last one deliberately)';
    throw RpcError.invalidParams(`Invalid params: gateway.tokens: ${message}`, [
      { path: ['gateway', 'tokens'], code: 'custom', message },
    ]);
  };
}
