import type { z } from 'zod';

const rawKey = Symbol('graph-engine.raw-input');

/** The value a {@link withRawFallback} schema yields when the input does not match. */
export interface RawInput {
  readonly [rawKey]: unknown;
}

/**
 * Wraps a params schema so a mismatching input still reaches the handler (as a
 * {@link RawInput}) instead of being rejected by the caller's validation layer. Graph
 * authoring must report invalid bodies in `pipeline:authored`, which needs the handler to
 * run; the JSON Schema of the wrapped schema stays that of `schema`.
 */
export function withRawFallback<T extends z.ZodType>(
  schema: T,
): z.ZodType<z.output<T> | RawInput, z.input<T>> {
  return schema.catch(
    (context) => ({ [rawKey]: context.input }) as unknown as z.output<T>,
  ) as unknown as z.ZodType<z.output<T> | RawInput, z.input<T>>;
}

/** The original input behind a value from {@link withRawFallback} (the value itself when it matched). */
export function unwrapRawInput(value: unknown): unknown {
  if (typeof value === 'object' && value !== null && rawKey in value) return (value as RawInput)[rawKey];
  return value;
}
