import { inspectValue, pathText, UNSAFE_KEYS } from '@agentd/input-guards';
import { type ConfigIssue, ConfigStoreError } from '../errors.js';

/**
 * Refuses a caller's value (a patch, a whole config, a `set` value under its path) that uses
 * `__proto__`, `constructor` or `prototype` as a key anywhere: merged into an ordinary object
 * such a key replaces its prototype or shadows a built-in, so it never reaches a merge.
 */
export function assertSafeKeys(value: unknown, path: readonly string[] = []): void {
  const badSegment = path.findIndex((segment) => UNSAFE_KEYS.has(segment));
  const problem =
    badSegment >= 0
      ? { path: path.slice(0, badSegment + 1), key: path[badSegment]! }
      : inspectKeys(value, path);
  if (problem === undefined) return;
  const where = pathText('', problem.path).slice(1);
  const issues: ConfigIssue[] = [
    {
      path: problem.path,
      pathText: where,
      message: `the key ${problem.key} is not allowed`,
      code: 'unsafe_key',
    },
  ];
  throw new ConfigStoreError(
    'VALIDATION',
    `Invalid config: ${where}: the key ${problem.key} is not allowed`,
    {
      data: { issues },
    },
  );
}

function inspectKeys(value: unknown, prefix: readonly string[]) {
  // Depth is the gateway's concern; here only the keys matter, so the bound is generous.
  const problem = inspectValue(value, { maxDepth: 10_000, refusedKeys: UNSAFE_KEYS });
  return problem?.kind === 'key' ? { path: [...prefix, ...problem.path], key: problem.key } : undefined;
}

/** A JSON-like object: created by `{}` or `Object.create(null)`, not a class instance. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

export function deepEqual(left: unknown, right: unknown): boolean {
  if (Object.is(left, right)) return true;
  if (Array.isArray(left)) {
    if (!Array.isArray(right) || left.length !== right.length) return false;
    return left.every((item, index) => deepEqual(item, right[index]));
  }
  if (isPlainObject(left) && isPlainObject(right)) {
    const leftKeys = Object.keys(left).filter((key) => left[key] !== undefined);
    const rightKeys = Object.keys(right).filter((key) => right[key] !== undefined);
    if (leftKeys.length !== rightKeys.length) return false;
    return leftKeys.every((key) => Object.hasOwn(right, key) && deepEqual(left[key], right[key]));
  }
  return false;
}

export function deepClone<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item) => deepClone(item)) as T;
  if (isPlainObject(value)) {
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) copy[key] = deepClone(item);
    return copy as T;
  }
  return value;
}

/**
 * Merge `patch` into `base` without touching either: objects merge key by key,
 * arrays and scalars replace, and `null` removes the key so the schema default
 * applies again. `undefined` in the patch is ignored (JSON cannot carry it).
 */
export function mergePatch(base: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return deepClone(patch);
  const result: Record<string, unknown> = isPlainObject(base) ? deepClone(base) : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    if (value === null) {
      delete result[key];
      continue;
    }
    result[key] = isPlainObject(value) ? mergePatch(result[key], value) : deepClone(value);
  }
  return result;
}

/**
 * Dot paths (relative to the given prefix) where two values differ: objects
 * are compared key by key, anything else (arrays included) as a whole.
 */
export function changedPaths(before: unknown, after: unknown, prefix: string[] = []): string[][] {
  if (isPlainObject(before) && isPlainObject(after)) {
    const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
    const paths: string[][] = [];
    for (const key of keys) paths.push(...changedPaths(before[key], after[key], [...prefix, key]));
    return paths;
  }
  return deepEqual(before, after) ? [] : [prefix];
}

export function getAtPath(value: unknown, path: readonly string[]): unknown {
  let current = value;
  for (const segment of path) {
    if (Array.isArray(current) && /^\d+$/.test(segment)) current = current[Number(segment)];
    else if (isPlainObject(current)) current = current[segment];
    else return undefined;
  }
  return current;
}

/** `{a: {b: value}}` for the path `['a', 'b']`. */
export function nestAtPath(path: readonly string[], value: unknown): unknown {
  let result = value;
  for (let index = path.length - 1; index >= 0; index -= 1) result = { [path[index]!]: result };
  return result;
}
