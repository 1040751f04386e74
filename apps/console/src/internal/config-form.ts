/** The part of a JSON Schema the config form reads. */
export interface FieldSchema {
  type?: string | string[];
  properties?: Record<string, FieldSchema>;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  maxLength?: number;
  description?: string;
  default?: unknown;
}

/** What kind of input a schema node becomes. */
export type FieldKind = 'boolean' | 'integer' | 'number' | 'enum' | 'string' | 'text' | 'object' | 'json';

/** The input kind for a schema node: scalars get their own control, anything else is edited as JSON. */
export function fieldKind(schema: FieldSchema): FieldKind {
  if (schema.enum?.every((v) => typeof v === 'string')) return 'enum';
  const type = Array.isArray(schema.type) ? undefined : schema.type;
  if (type === 'boolean') return 'boolean';
  if (type === 'integer') return 'integer';
  if (type === 'number') return 'number';
  if (type === 'string') return (schema.maxLength ?? 0) > 200 ? 'text' : 'string';
  if (type === 'object' && schema.properties && Object.keys(schema.properties).length > 0) return 'object';
  return 'json';
}

/** One changed leaf: where, and its value before and after. */
export interface FieldChange {
  path: string[];
  before: unknown;
  after: unknown;
}

const own = (value: unknown, key: string): unknown =>
  value !== null && typeof value === 'object' && Object.hasOwn(value, key)
    ? (value as Record<string, unknown>)[key]
    : undefined;

/** The value at `path` (own properties only, so `__proto__` and friends read nothing). */
export function getAt(value: unknown, path: readonly string[]): unknown {
  return path.reduce<unknown>((current, key) => own(current, key), value);
}

/** A copy of `value` with `path` set to `next` (intermediate objects created as needed). */
export function setAt(value: unknown, path: readonly string[], next: unknown): Record<string, unknown> {
  const base: Record<string, unknown> =
    value !== null && typeof value === 'object' && !Array.isArray(value)
      ? { ...(value as Record<string, unknown>) }
      : {};
  const [key, ...rest] = path;
  if (key === undefined) return base;
  Object.defineProperty(base, key, {
    value: rest.length === 0 ? next : setAt(own(base, key), rest, next),
    enumerable: true,
    writable: true,
    configurable: true,
  });
  return base;
}

/** The leaves of `after` that differ from `before`, walking the schema's object nodes. */
export function changesOf(
  schema: FieldSchema,
  before: unknown,
  after: unknown,
  path: string[] = [],
): FieldChange[] {
  if (fieldKind(schema) === 'object') {
    return Object.entries(schema.properties ?? {}).flatMap(([key, child]) =>
      changesOf(child, own(before, key), own(after, key), [...path, key]),
    );
  }
  return JSON.stringify(before) === JSON.stringify(after) ? [] : [{ path, before, after }];
}

/** A `config.patch` body holding only the changed leaves (arrays and records whole). */
export function patchOf(changes: readonly FieldChange[]): Record<string, unknown> {
  return changes.reduce<Record<string, unknown>>(
    (patch, change) => setAt(patch, change.path, change.after),
    {},
  );
}
