/** One node of an accessibility snapshot, as returned to callers. */
export interface SnapshotNode {
  /** ARIA role, or `text` for a bare text fragment. */
  role: string;
  /** Accessible name. */
  name?: string;
  /** Reference an `act` call can target (`ref`), valid until the next snapshot of the tab. */
  ref?: string;
  /** Text content of a leaf or of a text fragment. */
  text?: string;
  /** Link target (`url`), input hint text, state flags (`checked`, `disabled`, `level`, ...). */
  [property: string]: unknown;
  children?: SnapshotNode[];
}

const knownKeys = new Set(['role', 'name', 'ref', 'text', 'children']);

function clip(value: string, maxTextLength: number): string {
  return value.length > maxTextLength ? `${value.slice(0, maxTextLength)}…` : value;
}

/**
 * Copies Playwright's JSON aria tree into {@link SnapshotNode}s, depth first in document
 * order, keeping at most `maxNodes` nodes and clipping every string. What is cut is
 * counted so the caller can tell the snapshot is partial.
 */
export function boundSnapshot(
  raw: unknown,
  limits: { maxNodes: number; maxTextLength: number },
): { nodes: SnapshotNode[]; nodeCount: number; truncated: boolean } {
  let count = 0;
  let truncated = false;

  const convert = (value: unknown, depth: number): SnapshotNode | undefined => {
    if (count >= limits.maxNodes || depth > 256) {
      truncated = true;
      return undefined;
    }
    count++;
    if (typeof value === 'string') return { role: 'text', text: clip(value, limits.maxTextLength) };
    if (typeof value !== 'object' || value === null) return { role: 'text', text: String(value) };
    const source = value as Record<string, unknown>;
    const node: SnapshotNode = { role: typeof source.role === 'string' ? source.role : 'generic' };
    if (typeof source.name === 'string' && source.name !== '')
      node.name = clip(source.name, limits.maxTextLength);
    if (typeof source.ref === 'string') node.ref = source.ref;
    if (typeof source.text === 'string') node.text = clip(source.text, limits.maxTextLength);
    for (const [key, property] of Object.entries(source)) {
      if (knownKeys.has(key)) continue;
      node[key] = typeof property === 'string' ? clip(property, limits.maxTextLength) : property;
    }
    if (Array.isArray(source.children)) {
      const children: SnapshotNode[] = [];
      for (const child of source.children) {
        const converted = convert(child, depth + 1);
        if (converted === undefined) break;
        children.push(converted);
      }
      if (children.length > 0) node.children = children;
    }
    return node;
  };

  const nodes: SnapshotNode[] = [];
  for (const top of Array.isArray(raw) ? raw : [raw]) {
    const converted = convert(top, 0);
    if (converted === undefined) break;
    nodes.push(converted);
  }
  return { nodes, nodeCount: count, truncated };
}

/**
 * Clips the YAML form of a snapshot: at most `maxLines` lines (one line per node) and
 * `maxLineLength` characters per line.
 */
export function boundSnapshotText(
  text: string,
  limits: { maxLines: number; maxLineLength: number },
): { text: string; truncated: boolean } {
  const lines = text.split('\n');
  let truncated = lines.length > limits.maxLines;
  const kept = lines.slice(0, limits.maxLines).map((line) => {
    if (line.length <= limits.maxLineLength) return line;
    truncated = true;
    return `${line.slice(0, limits.maxLineLength)}…`;
  });
  return { text: kept.join('\n'), truncated };
}
