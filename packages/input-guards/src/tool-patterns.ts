/**
 * Tool names and the one glob syntax over them, used by every list of tools in agentd config
 * (agents' `tools` and `toolDenylist`, the global denylist, orchestrate's socket denylist,
 * autonomy's profiles, approval rules) and by the turn's narrowing:
 *
 * - a tool name is 1 to 64 of `A-Z a-z 0-9 _ . -`;
 * - a pattern is 1 to 128 of those plus `*` (any run of characters, none included) and `?`
 *   (exactly one character), matched against the whole name, case-sensitively.
 *
 * `*` allows everything, `memory_*` a prefix, `*_delete` a suffix, `*login*` a part,
 * `mem?ry_search` one character. No other character is special (no braces, classes or path
 * separators: tool names have none).
 */

/** What a tool name is: 1 to 64 of `A-Z a-z 0-9 _ . -`. */
export const TOOL_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** What a tool pattern is: 1 to 128 of a tool name's characters, `*` and `?`. */
export const TOOL_PATTERN = /^[A-Za-z0-9_.*?-]{1,128}$/;

/** The message of a pattern that is not one, for schemas. */
export const TOOL_PATTERN_RULE =
  'a tool name or glob of 1 to 128 letters, digits, _ . - and the wildcards * (any run) and ? (one character)';

/** Whether `pattern` is a valid tool pattern. */
export function isToolPattern(pattern: unknown): pattern is string {
  return typeof pattern === 'string' && TOOL_PATTERN.test(pattern);
}

/**
 * Whether `name` matches the glob `pattern` (whole name). Iterative, with one backtrack point
 * (the last `*`), so its cost is at most the product of the two lengths whatever the pattern:
 * no regular expression is built, and a pattern of many stars cannot make it backtrack
 * exponentially.
 */
export function matchesToolPattern(pattern: string, name: string): boolean {
  let p = 0;
  let n = 0;
  let star = -1;
  let resume = 0;
  while (n < name.length) {
    const char = pattern[p];
    if (char === '*') {
      star = p++;
      resume = n;
    } else if (char !== undefined && (char === '?' || char === name[n])) {
      p++;
      n++;
    } else if (star !== -1) {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (pattern[p] === '*') p++;
  return p === pattern.length;
}

/** Whether any of `patterns` matches `name`. */
export function matchesAnyToolPattern(patterns: readonly string[], name: string): boolean {
  return patterns.some((pattern) => matchesToolPattern(pattern, name));
}
