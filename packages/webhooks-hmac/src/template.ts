/**
 * What a template can see (the contract's "Template context"). Every field is optional;
 * a missing one resolves to an empty string like any unresolved expression.
 */
export interface TemplateContext {
  /** The parsed JSON body. Expressions without a known prefix resolve against it. */
  payload?: unknown;
  /** Request headers with lowercase names. */
  headers?: Readonly<Record<string, string>>;
  /** Query parameters. */
  query?: Readonly<Record<string, string>>;
  /** The request path after the webhook base path. */
  path?: string;
  /** The current time as ISO 8601, or a function giving it (called at most once per render). */
  now?: string | (() => string);
}

const EXPRESSION = /\{\{\s*([^{}]*?)\s*\}\}/g;
// One step of a path: `.name`, a leading `name`, or `[index]`.
const STEP = /(?:^|\.)([^.[\]]+)|\[(\d+)\]/y;
// Names that would walk into the prototype chain; refused even where an own property exists.
const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Replaces every `{{expr}}` in `template` with its value in `context`. Strings are
 * inserted as they are, numbers and booleans as text, objects and arrays as JSON;
 * an unresolved or null expression becomes an empty string. Never throws, never
 * evaluates code and never reads inherited properties.
 */
export function renderTemplate(template: string, context: TemplateContext): string {
  let now: string | undefined;
  const scoped: TemplateContext = {
    ...context,
    now: () => {
      now ??= typeof context.now === 'function' ? context.now() : (context.now ?? new Date().toISOString());
      return now;
    },
  };
  return template.replace(EXPRESSION, (_match, expression: string) =>
    formatValue(resolveTemplateExpression(expression, scoped)),
  );
}

/**
 * The raw value of one expression (the text between `{{` and `}}`), or `undefined`
 * when it does not resolve. `path` and `now` are the context's; `headers.<name>` and
 * `query.<key>` read those maps; `payload.<path>` and any other expression walk the
 * payload with dot and `[index]` steps.
 */
export function resolveTemplateExpression(expression: string, context: TemplateContext): unknown {
  const text = expression.trim();
  if (text === 'path') return context.path;
  if (text === 'now') return typeof context.now === 'function' ? context.now() : context.now;
  if (text.startsWith('headers.')) return ownValue(context.headers, text.slice(8).toLowerCase());
  if (text.startsWith('query.')) return ownValue(context.query, text.slice(6));
  if (text === 'payload') return context.payload;
  return walk(context.payload, text.startsWith('payload.') ? text.slice(8) : text);
}

function ownValue(map: Readonly<Record<string, string>> | undefined, key: string): string | undefined {
  if (!map || key === '' || FORBIDDEN.has(key) || !Object.hasOwn(map, key)) return undefined;
  return map[key];
}

function walk(root: unknown, path: string): unknown {
  if (path === '') return undefined;
  let current = root;
  STEP.lastIndex = 0;
  while (STEP.lastIndex < path.length) {
    const at = STEP.lastIndex;
    const step = STEP.exec(path);
    if (!step || step.index !== at) return undefined;
    const key = step[1] ?? step[2] ?? '';
    if (FORBIDDEN.has(key)) return undefined;
    if (current === null || typeof current !== 'object') return undefined;
    if (!Object.hasOwn(current, key)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

function formatValue(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  if (typeof value === 'object') {
    try {
      return JSON.stringify(value) ?? '';
    } catch {
      // A cyclic object cannot come from JSON.parse; from other callers it renders empty rather than throwing.
      return '';
    }
  }
  return '';
}
