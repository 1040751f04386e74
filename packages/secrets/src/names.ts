import { z } from 'zod';

/** Longest secret name (the contract's `env.set` key limit). */
export const SECRET_NAME_MAX_LENGTH = 256;
/** Longest secret value (the contract's `env.set` value limit). */
export const SECRET_VALUE_MAX_LENGTH = 8192;
/** What redaction writes in place of a credential; storing it would replace a secret with the mask. */
export const REDACTED_VALUE = '[REDACTED]';

/**
 * A secret name: an upper-case letter, then upper-case letters, digits and `_`, at most 256
 * characters (the contract's rule for `env.set` keys). Such a name is also a valid
 * `${secret:NAME}` reference name and an environment variable name.
 */
export const secretNameSchema = z
  .string()
  .max(SECRET_NAME_MAX_LENGTH, `at most ${SECRET_NAME_MAX_LENGTH} characters`)
  .regex(/^[A-Z][A-Z0-9_]*$/, 'an upper-case letter, then upper-case letters, digits and _ only');

/** A secret value: 1 to 8192 characters, never the literal `[REDACTED]`. */
export const secretValueSchema = z
  .string()
  .min(1, 'a secret value cannot be empty')
  .max(SECRET_VALUE_MAX_LENGTH, `at most ${SECRET_VALUE_MAX_LENGTH} characters`)
  .refine((value) => value !== REDACTED_VALUE, `the literal ${REDACTED_VALUE} is not a secret value`);

/**
 * A name filter for listing: a glob of name characters where `*` matches any run of
 * characters and `?` one character (`OPENAI_*`). Nothing else, so it is safe as a SQLite GLOB.
 */
export const secretFilterSchema = z
  .string()
  .min(1)
  .max(SECRET_NAME_MAX_LENGTH, `at most ${SECRET_NAME_MAX_LENGTH} characters`)
  .regex(/^[A-Za-z0-9_*?]+$/, 'letters, digits, _ and the wildcards * and ? only');

/** Longest listing. */
export const SECRET_LIST_MAX = 500;
/** Listing length when none is asked for. */
export const SECRET_LIST_DEFAULT = 100;

/** True when `name` matches the {@link secretFilterSchema} glob `filter` (case-sensitive). */
export function matchesFilter(name: string, filter: string): boolean {
  // The filter holds only word characters and the two wildcards, so nothing needs escaping.
  const pattern = filter.replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${pattern}$`).test(name);
}
