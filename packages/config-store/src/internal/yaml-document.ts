import { type Document, isMap, isScalar, isSeq, parseDocument } from 'yaml';
import { deepEqual, isPlainObject } from './values.js';

export interface ParsedYaml {
  document: Document;
  value: unknown;
  errors: { message: string }[];
}

export function parseYaml(text: string): ParsedYaml {
  const document = parseDocument(text, { prettyErrors: false, uniqueKeys: true });
  const errors = document.errors.map((error) => ({ message: error.message }));
  const value = errors.length === 0 ? (document.toJS({ maxAliasCount: 100 }) ?? {}) : undefined;
  return { document, value, errors };
}

/**
 * Make `document` hold `value` while keeping every node (and so every comment
 * a person wrote) whose content did not change. Rebuilding the document from
 * scratch would throw away hand-written comments on the first patch.
 */
export function syncDocument(document: Document, value: unknown): void {
  document.contents = syncNode(document, document.contents, value) as Document['contents'];
}

function syncNode(document: Document, node: unknown, value: unknown): unknown {
  if (isPlainObject(value) && isMap(node)) {
    for (const pair of [...node.items]) {
      const key = isScalar(pair.key) ? pair.key.value : pair.key;
      if (typeof key !== 'string' || !Object.hasOwn(value, key) || value[key] === undefined) {
        node.delete(pair.key);
      }
    }
    for (const [key, item] of Object.entries(value)) {
      if (item === undefined) continue;
      const existing = node.get(key, true);
      const next = existing === undefined ? document.createNode(item) : syncNode(document, existing, item);
      if (next !== existing) node.set(key, next);
    }
    return node;
  }
  if (isScalar(node) && !isPlainObject(value) && !Array.isArray(value) && Object.is(node.value, value))
    return node;
  if (isSeq(node) && Array.isArray(value) && deepEqual(node.toJSON(), value)) return node;
  return document.createNode(value);
}
