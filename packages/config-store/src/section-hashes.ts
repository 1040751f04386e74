import { createHash } from 'node:crypto';

/**
 * One SHA-256 hex digest per top-level section of `config`, for comparing the configuration of
 * several processes that must agree (a cluster's join check). Keys are sorted, so equal values
 * hash equally whatever the key order in the file. `omit` names what may differ between
 * processes, as dot paths: `gateway.port`, a whole section (`storage`), or `*` for every array
 * item or object key at that level (`gateway.tokens.*.createdAt`). Secret references hash as
 * written (`${secret:NAME}`), never resolved.
 */
export function sectionHashes(
  config: Readonly<Record<string, unknown>>,
  options: { omit?: readonly string[] | undefined } = {},
): Record<string, string> {
  const omitted = (options.omit ?? []).map((path) => path.split('.'));
  const hashes: Record<string, string> = {};
  for (const name of Object.keys(config).sort()) {
    const paths = omitted.filter((path) => path[0] === name).map((path) => path.slice(1));
    if (paths.some((path) => path.length === 0)) continue;
    const kept = paths.reduce<unknown>((value, path) => without(value, path), config[name]);
    hashes[name] = createHash('sha256').update(canonicalJson(kept)).digest('hex');
  }
  return hashes;
}

/** `value` with the entry at `path` removed (a copy; the input is left as it is). */
function without(value: unknown, path: readonly string[]): unknown {
  const [head, ...rest] = path;
  if (head === undefined || typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    if (head !== '*') return value;
    return rest.length === 0 ? [] : value.map((item) => without(item, rest));
  }
  const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const key of head === '*' ? Object.keys(copy) : [head]) {
    if (!Object.hasOwn(copy, key)) continue;
    if (rest.length === 0) delete copy[key];
    else copy[key] = without(copy[key], rest);
  }
  return copy;
}

/** JSON with object keys sorted at every depth; `undefined` members are left out as JSON does. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.keys(value)
      .sort()
      .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}
