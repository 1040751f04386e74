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
