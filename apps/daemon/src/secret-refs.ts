import { ConfigStoreError, resolveSecretRefs, secretRefNames } from '@agentd/config-store';
import { RpcError } from '@agentd/rpc-core';
import type { Secrets } from '@agentd/secrets';

/**
 * Fails when a `${secret:NAME}` anywhere in `value` names a secret neither the secrets store,
 * the `.env` file nor the environment has: ConfigStoreError `SECRET_MISSING` naming the secret
 * and the key that references it. Reads no value and counts no use.
 */
export async function checkSecretRefs(value: unknown, secrets: Pick<Secrets, 'has'>): Promise<void> {
  await resolveSecretRefs(value, async (name) => ((await secrets.has(name)) ? '' : undefined));
}

/**
 * The config-write check of unknown references: a write over RPC that names a secret nobody
 * has is a `-32602` naming the key, and nothing is written (an empty credential is never served).
 */
export function unknownSecretRefGuard(
  secrets: Pick<Secrets, 'has'>,
): (candidate: Record<string, unknown>) => Promise<void> {
  return async (candidate) => {
    try {
      await checkSecretRefs(candidate, secrets);
    } catch (error) {
      if (!(error instanceof ConfigStoreError) || error.code !== 'SECRET_MISSING') throw error;
      const { name, path } = error.data as { name: string; path: string };
      const message = `unknown secret ${name}: set it with env.set (or the environment) before referencing it`;
      throw RpcError.invalidParams(`Invalid params: ${path}: ${message}`, [
        { path: path.split('.'), code: 'custom', message },
      ]);
    }
  };
}

/** The sections of `config` holding a `${secret:NAME}` reference to `name`. */
export function sectionsReferencing(config: object, name: string): string[] {
  return Object.entries(config)
    .filter(([, section]) => secretRefNames(section).has(name))
    .map(([section]) => section);
}
