/** A location inside a value: object keys and array indexes from the root. */
export type ValuePath = Array<string | number>;

/** What {@link inspectValue} found wrong with a value, and where. */
export type ValueProblem =
  | { kind: 'depth'; path: ValuePath; maxDepth: number }
  | { kind: 'key'; path: ValuePath; key: string };

/** Options of {@link inspectValue}. */
export interface InspectOptions {
  /** Deepest nesting of arrays and objects allowed; the root container is level 1. */
  maxDepth: number;
  /**
   * Keys refused anywhere in the value.
   * @default only `__proto__`, the one key that changes an object's prototype when assigned
   */
  refusedKeys?: ReadonlySet<string> | undefined;
}

const PROTO_ONLY: ReadonlySet<string> = new Set(['__proto__']);

/**
 * Walks a parsed JSON value without recursion (so a value nested 100,000 levels deep costs
 * no stack) and answers the first problem found: a container deeper than `maxDepth`, or a
 * refused key. `undefined` when the value is fine. Run it before anything recursive (schema
 * validation, merges, serialisation) sees the value.
 */
export function inspectValue(value: unknown, options: InspectOptions): ValueProblem | undefined {
  const refused = options.refusedKeys ?? PROTO_ONLY;
  const stack: Array<{ value: unknown; path: ValuePath }> = [{ value, path: [] }];
  while (stack.length > 0) {
    const { value: current, path } = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (path.length >= options.maxDepth) return { kind: 'depth', path, maxDepth: options.maxDepth };
    if (Array.isArray(current)) {
      for (let index = current.length - 1; index >= 0; index--) {
        stack.push({ value: current[index], path: [...path, index] });
      }
      continue;
    }
    for (const key of Object.keys(current)) {
      if (refused.has(key)) return { kind: 'key', path: [...path, key], key };
      stack.push({ value: (current as Record<string, unknown>)[key], path: [...path, key] });
    }
  }
  return undefined;
}

/** `a.b[2].c`-style text for a path, with `root` as its first segment (e.g. `params`). */
export function pathText(root: string, path: ValuePath): string {
  let text = root;
  for (const segment of path) text += typeof segment === 'number' ? `[${segment}]` : `.${segment}`;
  return text;
}
