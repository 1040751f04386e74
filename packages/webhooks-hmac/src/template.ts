import { ownPath, valueText } from '@agentd/input-guards';

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

/** A parsed expression: where to look, and the path steps (`undefined`: the path cannot resolve). */
type Compiled =
  | { kind: 'path' | 'now' | 'payload' }
  | { kind: 'headers' | 'query'; key: string }
  | { kind: 'walk'; steps: string[] | undefined };

/** A template split into literal text and parsed expressions, in order. */
type CompiledTemplate = Array<string | Compiled>;

// Mapping templates come from config and repeat on every request; parsing each once
// keeps rendering to lookups. Bounded, since callers may also render one-off templates.
const CACHE_LIMIT = 512;
const templateCache = new Map<string, CompiledTemplate>();
const expressionCache = new Map<string, Compiled>();

function remember<V>(cache: Map<string, V>, key: string, value: V): V {
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(key, value);
  return value;
}

function compileExpression(expression: string): Compiled {
  const cached = expressionCache.get(expression);
  if (cached) return cached;
  const text = expression.trim();
  let compiled: Compiled;
  if (text === 'path' || text === 'now' || text === 'payload') compiled = { kind: text };
  else if (text.startsWith('headers.')) compiled = { kind: 'headers', key: text.slice(8).toLowerCase() };
  else if (text.startsWith('query.')) compiled = { kind: 'query', key: text.slice(6) };
  else compiled = { kind: 'walk', steps: parseSteps(text.startsWith('payload.') ? text.slice(8) : text) };
  return remember(expressionCache, expression, compiled);
}

function compileTemplate(template: string): CompiledTemplate {
  const cached = templateCache.get(template);
  if (cached) return cached;
  const parts: CompiledTemplate = [];
  let last = 0;
  for (const match of template.matchAll(EXPRESSION)) {
    if (match.index > last) parts.push(template.slice(last, match.index));
    parts.push(compileExpression(match[1] ?? ''));
    last = match.index + match[0].length;
  }
  if (last < template.length) parts.push(template.slice(last));
  return remember(templateCache, template, parts);
}

/**
 * Replaces every `{{expr}}` in `template` with its value in `context`. Strings are
 * inserted as they are, numbers and booleans as text, objects and arrays as JSON;
 * an unresolved or null expression becomes an empty string. Never throws, never
 * evaluates code and never reads inherited properties.
 */
export function renderTemplate(template: string, context: TemplateContext): string {
  const parts = compileTemplate(template);
  let now: string | undefined;
  let out = '';
  for (const part of parts) {
    if (typeof part === 'string') {
      out += part;
    } else if (part.kind === 'now') {
      now ??= typeof context.now === 'function' ? context.now() : (context.now ?? new Date().toISOString());
      out += now;
    } else {
      out += valueText(evaluate(part, context));
    }
  }
  return out;
}

/**
 * The raw value of one expression (the text between `{{` and `}}`), or `undefined`
 * when it does not resolve. `path` and `now` are the context's; `headers.<name>` and
 * `query.<key>` read those maps; `payload.<path>` and any other expression walk the
 * payload with dot and `[index]` steps.
 */
export function resolveTemplateExpression(expression: string, context: TemplateContext): unknown {
  const compiled = compileExpression(expression);
  if (compiled.kind === 'now') return typeof context.now === 'function' ? context.now() : context.now;
  return evaluate(compiled, context);
}

function evaluate(compiled: Compiled, context: TemplateContext): unknown {
  switch (compiled.kind) {
    case 'path':
      return context.path;
    case 'now':
      return typeof context.now === 'function' ? context.now() : context.now;
    case 'payload':
      return context.payload;
    case 'headers':
      return ownValue(context.headers, compiled.key);
    case 'query':
      return ownValue(context.query, compiled.key);
    case 'walk':
      return compiled.steps === undefined ? undefined : ownPath(context.payload, compiled.steps);
  }
}

function ownValue(map: Readonly<Record<string, string>> | undefined, key: string): string | undefined {
  if (!map || key === '' || FORBIDDEN.has(key) || !Object.hasOwn(map, key)) return undefined;
  return map[key];
}

function parseSteps(path: string): string[] | undefined {
  if (path === '') return undefined;
  const steps: string[] = [];
  STEP.lastIndex = 0;
  while (STEP.lastIndex < path.length) {
    const at = STEP.lastIndex;
    const step = STEP.exec(path);
    if (!step || step.index !== at) return undefined;
    const key = step[1] ?? step[2] ?? '';
    if (FORBIDDEN.has(key)) return undefined;
    steps.push(key);
  }
  return steps;
}
