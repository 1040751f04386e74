/** SQL fragments that read the same on libsql and PostgreSQL. */

/**
 * `column` starts with the bound prefix, or the prefix is null; binds the prefix three times.
 * The casts type the parameters for PostgreSQL, and both dialects count characters alike.
 */
export function keyPrefixMatch(column: string): string {
  return `(CAST(? AS TEXT) IS NULL OR substr(${column}, 1, length(CAST(? AS TEXT))) = ?)`;
}
