/**
 * The prompt template rules (the same as the webhook templates): `{{inputs.a.b}}` reads the
 * run's inputs, `{{nodes.<id>.output}}` reads a finished node's output, whitespace inside the
 * braces is ignored, and anything unresolved renders as the empty string. Lookups only
 * follow own properties of plain data, so `__proto__`, `constructor` or `toString` can never
 * reach an object's prototype.
 */

import { ownPath, valueText } from '@agentd/input-guards';

/** A parsed template: literal text and references, rendered without re-parsing. */
export type Segment =
  | { kind: 'text'; text: string }
  | { kind: 'input'; path: string[] }
  | { kind: 'node'; id: string; field: string; rest: string[] }
  | { kind: 'empty' };

const reference = /\{\{\s*([^{}]*?)\s*\}\}/g;
const forbidden = new Set(['__proto__', 'prototype', 'constructor']);

/** Splits a template into segments once, so rendering a node costs a join. */
export function compileTemplate(template: string): Segment[] {
  const segments: Segment[] = [];
  let last = 0;
  for (const match of template.matchAll(reference)) {
    const index = match.index ?? 0;
    if (index > last) segments.push({ kind: 'text', text: template.slice(last, index) });
    segments.push(parseReference(match[1] ?? ''));
    last = index + match[0].length;
  }
  if (last < template.length) segments.push({ kind: 'text', text: template.slice(last) });
  return segments;
}

function parseReference(expression: string): Segment {
  const path = expression.split('.');
  if (path.some((part) => part.length === 0 || forbidden.has(part))) return { kind: 'empty' };
  const [root, ...rest] = path;
  if (root === 'inputs' && rest.length > 0) return { kind: 'input', path: rest };
  if (root === 'nodes' && rest.length >= 2) {
    const [id, field, ...tail] = rest as [string, string, ...string[]];
    return { kind: 'node', id, field, rest: tail };
  }
  return { kind: 'empty' };
}

/** The node ids a template reads the output of. */
export function referencedNodes(segments: readonly Segment[]): string[] {
  const ids: string[] = [];
  for (const segment of segments) {
    if (segment.kind === 'node' && !ids.includes(segment.id)) ids.push(segment.id);
  }
  return ids;
}

/** Renders compiled segments; `outputOf` answers undefined for a node without output. */
export function renderSegments(
  segments: readonly Segment[],
  inputs: unknown,
  outputOf: (nodeId: string) => string | undefined,
): string {
  if (segments.length === 1 && segments[0]!.kind === 'text') return segments[0]!.text;
  let out = '';
  for (const segment of segments) {
    switch (segment.kind) {
      case 'text':
        out += segment.text;
        break;
      case 'input':
        out += valueText(ownPath(inputs, segment.path));
        break;
      case 'node':
        // Only `.output` is defined on a node; its text has no further fields.
        if (segment.field === 'output' && segment.rest.length === 0) out += outputOf(segment.id) ?? '';
        break;
      case 'empty':
        break;
    }
  }
  return out;
}

/** Renders a template string directly (compiles and renders in one go). */
export function renderTemplate(
  template: string,
  context: { inputs?: unknown; outputs?: Readonly<Record<string, string>> },
): string {
  const outputs = context.outputs ?? {};
  return renderSegments(compileTemplate(template), context.inputs, (id) =>
    Object.hasOwn(outputs, id) ? outputs[id] : undefined,
  );
}
