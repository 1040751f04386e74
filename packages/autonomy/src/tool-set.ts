import { matchesAnyToolPattern } from '@agentd/input-guards';

/**
 * Whether `name` matches one of `patterns`: tool names or globs (`*` any run, `?` one
 * character), `@agentd/input-guards`' one tool-name matcher.
 */
export function matchesAny(patterns: readonly string[], name: string): boolean {
  return matchesAnyToolPattern(patterns, name);
}

/**
 * The concrete tool names an agent may call: the registered `names` its `allow` patterns
 * match and no `deny` pattern (the agent's or the global denylist) matches. Sorted.
 */
export function resolveToolSet(
  names: readonly string[],
  allow: readonly string[],
  ...deny: ReadonlyArray<readonly string[]>
): string[] {
  return names
    .filter((name) => matchesAny(allow, name) && !deny.some((list) => matchesAny(list, name)))
    .sort();
}

/** The names in both sets, sorted: a child's set is never wider than its parent's. */
export function intersectToolSets(a: readonly string[], b: readonly string[]): string[] {
  const other = new Set(b);
  return [...new Set(a)].filter((name) => other.has(name)).sort();
}
