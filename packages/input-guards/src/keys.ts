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
