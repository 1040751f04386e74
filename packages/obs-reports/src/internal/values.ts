import type { ScrubbedValue } from './scrub.js';

type Data = Record<string, ScrubbedValue>;

/** A finite number field, or `fallback`. */
export const num = (data: Data, key: string, fallback = 0): number => {
  const value = data[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
};

/** A non-negative integer count field; malformed or missing folds to 0. */
export const count = (data: Data, key: string): number => {
  const value = data[key];
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : 0;
};

/** A string field, or undefined. */
export const str = (data: Data, key: string): string | undefined => {
  const value = data[key];
  return typeof value === 'string' ? value : undefined;
};

/** A boolean field, or `fallback`. */
export const bool = (data: Data, key: string, fallback = false): boolean => {
  const value = data[key];
  return typeof value === 'boolean' ? value : fallback;
};

/** A string-array field (non-strings dropped). */
export const strings = (data: Data, key: string): string[] => {
  const value = data[key];
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
};

/** A nested object field, or an empty one. */
export const obj = (data: Data, key: string): Data => {
  const value = data[key];
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : {};
};

/** Rounds to 4 decimals: rates and ratios. */
export const ratio = (part: number, whole: number): number =>
  whole === 0 ? 0 : Math.round((part / whole) * 10_000) / 10_000;

/** Rounds US dollars to 6 decimals so sums are stable across runs. */
export const usd = (value: number): number => Math.round(value * 1_000_000) / 1_000_000;

/** Code-unit order of two strings (locale-free, so sorted output is the same on every machine). */
export const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The most frequent key of a count map; ties go to the alphabetically first. */
export function topKey(counts: Map<string, number>): string | null {
  let best: string | null = null;
  let bestCount = 0;
  for (const [key, value] of [...counts.entries()].sort(([a], [b]) => compare(a, b))) {
    if (value > bestCount) {
      best = key;
      bestCount = value;
    }
  }
  return best;
}

/** Adds one to a key of a count map. */
export const bump = (counts: Map<string, number>, key: string, by = 1): void => {
  counts.set(key, (counts.get(key) ?? 0) + by);
};

/** A map with sorted keys as a plain object (stable JSON). */
export function sortedObject<V>(map: Map<string, V>): Record<string, V> {
  return Object.fromEntries([...map.entries()].sort(([a], [b]) => compare(a, b)));
}
