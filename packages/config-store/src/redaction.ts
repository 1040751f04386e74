import { REDACTED, REDACTED_FIELDS } from '@agentd/logging';
import { isSecretRef } from './secret-refs.js';
import { isPlainObject } from './internal/values.js';

export { REDACTED } from '@agentd/logging';

/**
 * Field names whose values are credentials in config: `@agentd/logging`'s
 * `REDACTED_FIELDS` (the one key list, the interface contract's) plus two names
 * only config holds, `tokenHash` (stored token hashes) and `authToken` (URL query
 * credentials). Matching ignores case.
 */
export const CREDENTIAL_FIELD_NAMES: readonly string[] = Object.freeze([
  ...REDACTED_FIELDS,
  'tokenHash',
  'authToken',
]);

const credentialNames = new Set(CREDENTIAL_FIELD_NAMES.map((name) => name.toLowerCase()));

/** True when a field with this name holds a credential. */
export function isCredentialFieldName(name: string): boolean {
  return credentialNames.has(name.toLowerCase());
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

function redactValue(value: unknown): unknown {
  if (typeof value === 'string') return redactUrlCredentials(value);
  if (Array.isArray(value)) return value.map((item) => redactValue(item));
  if (!isPlainObject(value)) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    copy[key] =
      isCredentialFieldName(key) && !isEmpty(item) && !isSecretRef(item) ? REDACTED : redactValue(item);
  }
  return copy;
}

// `scheme://user:pass@host` and credential-named query parameters (`?authToken=…`).
const urlUserInfo = /\b([a-z][a-z0-9+.-]*:\/\/)[^/\s@]+@/gi;
const urlQueryCredential = /([?&])([A-Za-z_-]+)=([^&#\s"']*)/g;

/**
 * Masks credentials carried inside URL-like strings: the user-info part and
 * query parameters with a credential name (`authToken`, `access_token`, `key`…).
 * Text without `://` is returned unchanged.
 */
export function redactUrlCredentials(text: string): string {
  if (!text.includes('://')) return text;
  return text
    .replace(urlUserInfo, `$1${REDACTED}@`)
    .replace(urlQueryCredential, (whole, lead: string, name: string) =>
      isCredentialFieldName(name.replace(/[_-]/g, '')) || isCredentialFieldName(name)
        ? `${lead}${name}=${REDACTED}`
        : whole,
    );
}

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
      const match = yamlCredentialLine.exec(line);
      if (match && isCredentialFieldName(match[3] as string)) {
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
