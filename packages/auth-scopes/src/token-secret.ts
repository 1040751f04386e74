import crypto, { createHash, randomBytes } from 'node:crypto';

/** Prefix of every secret {@link generateTokenSecret} makes, so leaked secrets are easy to grep for. */
export const TOKEN_SECRET_PREFIX = 'agd_';

/** Prefix of every stored token hash. */
export const TOKEN_HASH_PREFIX = 'sha256:';

/**
 * The 32-byte SHA-256 digest of a secret, as compared by the token store. Every HTTP request
 * hashes its bearer: the one-shot `crypto.hash` (Node 20.12+) takes about half the time of a
 * `Hash` object; older Node 20 releases keep `createHash`.
 */
export function digestToken(secret: string): Buffer {
  // Read off the module object: a named import of a missing export fails the whole module.
  if (typeof crypto.hash === 'function') return crypto.hash('sha256', secret, 'buffer');
  return createHash('sha256').update(secret, 'utf8').digest();
}

/**
 * Hashes a bearer secret into its stored form `sha256:<64 lowercase hex>`.
 * A plain (unsalted) hash suffices because generated secrets carry 256 bits of
 * randomness; it cannot be guessed back from the hash.
 */
export function hashToken(secret: string): `sha256:${string}` {
  return `${TOKEN_HASH_PREFIX}${digestToken(secret).toString('hex')}`;
}

/** A fresh bearer secret: `agd_` followed by 32 random bytes in base64url (43 characters). */
export function generateTokenSecret(): string {
  return TOKEN_SECRET_PREFIX + randomBytes(32).toString('base64url');
}
