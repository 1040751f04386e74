/** A value the evidence tables keep: counts, booleans, ids and enums, and small nests of them. */
export type ScrubbedValue =
  | number
  | boolean
  | string
  | null
  | ScrubbedValue[]
  | { [key: string]: ScrubbedValue };

const KEY = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
// Ids and enum values: no whitespace, so a sentence or a message body never passes.
const ID_LIKE = /^[A-Za-z0-9_.:@/#%+=-]{1,128}$/;
// A key that names a credential keeps nothing, whatever its value looks like.
const SECRET_KEY =
  /(secret|token|password|passwd|apikey|api_key|authorization|cookie|credential|privatekey)/i;
const MAX_ARRAY = 32;
const MAX_DEPTH = 3;

/**
 * Keeps the parts of an event payload that are counts, ids and closed enums; drops the rest.
 * Why: producers promise content-free payloads, and this is the last gate before the rows
 * become durable and reach reports, so a careless producer cannot leak a body or a key.
 */
export function scrubPayload(payload: Record<string, unknown>): Record<string, ScrubbedValue> {
  const out = scrubValue(payload, 0);
  return out !== undefined && typeof out === 'object' && out !== null && !Array.isArray(out) ? out : {};
}

function scrubValue(value: unknown, depth: number): ScrubbedValue | undefined {
  if (value === null) return null;
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string') return ID_LIKE.test(value) ? value : undefined;
  if (depth >= MAX_DEPTH) return undefined;
  if (Array.isArray(value)) {
    const items: ScrubbedValue[] = [];
    for (const item of value.slice(0, MAX_ARRAY)) {
      const kept = scrubValue(item, depth + 1);
      if (kept !== undefined) items.push(kept);
    }
    return items;
  }
  if (typeof value === 'object') {
    const out: { [key: string]: ScrubbedValue } = {};
    for (const key of Object.keys(value as object).sort()) {
      if (!KEY.test(key) || SECRET_KEY.test(key)) continue;
      const kept = scrubValue((value as Record<string, unknown>)[key], depth + 1);
      if (kept !== undefined) out[key] = kept;
    }
    return out;
  }
  return undefined;
}

/** A closed-enum-like token, or `fallback` when the value is not one. */
export function enumToken(value: unknown, fallback: string): string {
  return typeof value === 'string' && /^[a-z0-9_.:-]{1,64}$/.test(value) ? value : fallback;
}

/** An id-like string, or undefined. */
export function idToken(value: unknown): string | undefined {
  return typeof value === 'string' && ID_LIKE.test(value) ? value : undefined;
}
