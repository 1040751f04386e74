import {
  isHeaderMap,
  isPlainHeader,
  isRedactedField,
  REDACTED,
  REDACTED_FIELDS,
  redactUrls,
} from '@agentd/logging';
import { isSecretRef } from './secret-refs.js';
import { isPlainObject } from './internal/values.js';

export { REDACTED } from '@agentd/logging';

/**
 * Field names whose values are credentials in config: `@agentd/logging`'s
 * `REDACTED_FIELDS` (the one key list, the interface contract's) plus two names
 * only config holds, `tokenHash` (stored token hashes) and `authToken` (URL query
 * credentials). Matching is logging's one policy: case, `-` and `_` ignored, and any
 * name ending in a credential word (`X-Api-Key`, `x-auth-token`) matches too.
 */
export const CREDENTIAL_FIELD_NAMES: readonly string[] = Object.freeze([
  ...REDACTED_FIELDS,
  'tokenHash',
  'authToken',
]);

/** True when a field with this name holds a credential (logging's policy, plus `tokenHash`). */
export function isCredentialFieldName(name: string): boolean {
  return isRedactedField(name) || name.toLowerCase().replace(/[-_]/g, '') === 'tokenhash';
}

/**
 * Deep copy of `value` where every credential-named field, at any depth and
 * inside arrays, has its value replaced by `[REDACTED]`. Secret references
 * (`${secret:NAME}`) are kept because they only name a secret, and knowing
 * which secret a field uses is what an operator editing config needs. Empty
 * values (`null`, `undefined`, `''`) are kept so "not set" stays visible.
 */
export function redactConfig<T>(value: T): T {
  return redactValue(value) as T;
}

function redactValue(value: unknown, inHeaderMap = false): unknown {
  if (typeof value === 'string') return redactUrlCredentials(value);
  if (Array.isArray(value)) return value.map((item) => redactValue(item));
  if (!isPlainObject(value)) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    // In a header map (provider `headers`) every header but the allow-listed ones is a credential.
    const credential = isCredentialFieldName(key) || (inHeaderMap && !isPlainHeader(key));
    copy[key] =
      credential && !isEmpty(item) && !isSecretRef(item) ? REDACTED : redactValue(item, isHeaderMap(key));
  }
  return copy;
}

/**
 * Masks credentials carried inside URL-like strings: the user-info part and
 * query parameters with a credential name (`authToken`, `access_token`, `key`…).
 * Text without `://` is returned unchanged. The same function as `@agentd/logging`'s
 * `redactUrls`, so config answers and logs mask URLs alike.
 */
export const redactUrlCredentials: (text: string) => string = redactUrls;

// A YAML line that opens a nested map: `key:` with nothing after the colon.
const yamlMapOpener = /^\s*(["']?)([A-Za-z_][\w-]*)\1\s*:\s*$/;

// A YAML line `key: value` or `- key: value`, optionally prefixed by a diff marker.
const yamlCredentialLine = /^([+\- ]?\s*(?:-\s+)?)(["']?)([A-Za-z_][\w-]*)\2(\s*:\s+)(.+)$/;

/**
 * Redacts YAML text line by line (used for diffs of config.yaml): the value of
 * every credential-named key that is not a secret reference, and credentials
 * inside URLs anywhere on a line. Comments and layout are kept.
 */
export function redactConfigText(text: string): string {
  // Inside a block scalar (`token: |`) of a credential key, every deeper-indented line is the value.
  let blockIndent: number | undefined;
  // Inside a header map (`headers:`), every header but the allow-listed ones is a credential.
  let headersIndent: number | undefined;
  return text
    .split('\n')
    .map((line) => {
      const body = line.replace(/^[+\- ]/, '');
      const indent = body.length - body.trimStart().length;
      if (blockIndent !== undefined) {
        if (body.trim() !== '' && indent > blockIndent)
          return `${line.slice(0, line.length - body.length + indent)}${REDACTED}`;
        blockIndent = undefined;
      }
      if (headersIndent !== undefined && body.trim() !== '' && indent <= headersIndent)
        headersIndent = undefined;
      const opener = yamlMapOpener.exec(body);
      if (opener && isHeaderMap(opener[2] as string)) headersIndent = indent;
      const match = yamlCredentialLine.exec(line);
      const key = match?.[3] as string | undefined;
      const inHeaders = headersIndent !== undefined && indent > headersIndent;
      if (match && key !== undefined && (isCredentialFieldName(key) || (inHeaders && !isPlainHeader(key)))) {
        const value = (match[5] as string).trim();
        if (/^[|>][0-9+-]*$/.test(value)) {
          blockIndent = indent;
          return line;
        }
        const unquoted = value.replace(/^(["'])(.*)\1$/, '$2');
        if (unquoted !== '' && !isSecretRef(unquoted)) {
          return `${match[1]}${match[2]}${match[3]}${match[2]}${match[4]}${REDACTED}`;
        }
      }
      return redactUrlCredentials(line);
    })
    .join('\n');
}

function isEmpty(value: unknown): boolean {
  return value === null || value === undefined || value === '';
}

/**
 * Dot paths of credential-named fields that hold a plain string instead of a
 * `${secret:NAME}` reference, for security posture reports. Values are never
 * returned. Array items appear as numeric segments (`gateway.tokens.0.token`).
 */
export function listPlaintextCredentials(config: unknown): string[] {
  const found: string[] = [];
  const visit = (value: unknown, path: string[]): void => {
    if (Array.isArray(value)) {
      for (const [index, item] of value.entries()) visit(item, [...path, String(index)]);
      return;
    }
    if (!isPlainObject(value)) return;
    for (const [key, item] of Object.entries(value)) {
      if (isCredentialFieldName(key) && typeof item === 'string' && item !== '' && !isSecretRef(item)) {
        found.push([...path, key].join('.'));
      } else {
        visit(item, [...path, key]);
      }
    }
  };
  visit(config, []);
  return found;
}
