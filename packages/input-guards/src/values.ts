/**
 * The value at `path` under `root`, following own properties of objects and arrays only, so a
 * caller's path never reaches an inherited `toString` or a prototype; `undefined` when a step
 * is missing or passes through something that is not an object.
 */
export function ownPath(root: unknown, path: readonly string[]): unknown {
  let current = root;
  for (const key of path) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, key)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

/**
 * A value as template text: strings as they are, numbers, booleans and bigints as text, objects
 * and arrays as JSON; `null`, `undefined`, functions, symbols and what JSON cannot hold (a cycle,
 * a bigint inside an object) as the empty string. Never throws.
 */
export function valueText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  if (typeof value !== 'object') return '';
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}
