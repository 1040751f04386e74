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

/** A container waiting to be walked; its path is rebuilt from the parent links only on a problem. */
interface Frame {
  value: object;
  depth: number;
  key: string | number | undefined;
  parent: Frame | undefined;
}

function pathOf(frame: Frame | undefined, last?: string): ValuePath {
  const path: ValuePath = last === undefined ? [] : [last];
  for (let at = frame; at?.key !== undefined; at = at.parent) path.push(at.key);
  return path.reverse();
}

/**
 * Walks a parsed JSON value without recursion (so a value nested 100,000 levels deep costs
 * no stack) and answers the first problem found: a container deeper than `maxDepth`, or a
 * refused key. `undefined` when the value is fine. Run it before anything recursive (schema
 * validation, merges, serialisation) sees the value. It runs on every call's params, so it
 * allocates one small frame per container and nothing per scalar.
 */
export function inspectValue(value: unknown, options: InspectOptions): ValueProblem | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const refused = options.refusedKeys ?? PROTO_ONLY;
  const stack: Frame[] = [{ value, depth: 0, key: undefined, parent: undefined }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    if (frame.depth >= options.maxDepth) {
      return { kind: 'depth', path: pathOf(frame), maxDepth: options.maxDepth };
    }
    const current = frame.value;
    if (Array.isArray(current)) {
      for (let index = current.length - 1; index >= 0; index--) {
        const item: unknown = current[index];
        if (item !== null && typeof item === 'object') {
          stack.push({ value: item, depth: frame.depth + 1, key: index, parent: frame });
        }
      }
      continue;
    }
    for (const key of Object.keys(current)) {
      if (refused.has(key)) return { kind: 'key', path: pathOf(frame, key), key };
      const item: unknown = (current as Record<string, unknown>)[key];
      if (item !== null && typeof item === 'object') {
        stack.push({ value: item, depth: frame.depth + 1, key, parent: frame });
      }
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
