/**
 * Property names that, used as a key on an ordinary object, reach its prototype: assigning
 * `__proto__` replaces the prototype, and `constructor`/`prototype` name built-ins that a
 * lookup by a caller's string would find on every object.
 */
export const UNSAFE_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** Whether `key` must not be used as a property name taken from a caller. */
export function isUnsafeKey(key: string): boolean {
  return UNSAFE_KEYS.has(key);
}

/**
 * The value `record` holds under `key` as its own property, or `undefined`. A caller's id
 * such as `toString` or `constructor` then finds nothing instead of an inherited built-in.
 */
export function ownEntry<T>(record: Readonly<Record<string, T>> | undefined, key: string): T | undefined {
  return record !== undefined && Object.hasOwn(record, key) ? record[key] : undefined;
}

/**
 * Whether `value` is an object with a function under each of `names` (own or inherited, as a
 * class instance's methods are): the check behind an option that takes an injected logger or
 * backend, before anything calls it.
 */
export function hasMethods(value: unknown, names: readonly string[]): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    names.every((name) => typeof (value as Record<string, unknown>)[name] === 'function')
  );
}
