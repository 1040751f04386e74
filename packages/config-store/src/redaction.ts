import { isSecretRef } from './secret-refs.js';
import { isPlainObject } from './internal/values.js';

/** The text that replaces a redacted credential value. */
export const REDACTED = '[REDACTED]';

/**
 * Field names whose values are credentials: the interface contract's list
 * plus `tokenHash` and `authToken`. Matching ignores case.
 */
export const CREDENTIAL_FIELD_NAMES: readonly string[] = Object.freeze([
  'apiKey',
  'token',
  'password',
  'secret',
  'authorization',
  'accessToken',
  'refreshToken',
  'botToken',
  'privateKey',
  'credential',
  'credentials',
  'key',
  'passphrase',
  'connectionString',
  'accessKey',
  'cookie',
  'webhookSecret',
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
  if (Array.isArray(value)) return value.map((item) => redactValue(item));
  if (!isPlainObject(value)) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    copy[key] =
      isCredentialFieldName(key) && !isEmpty(item) && !isSecretRef(item) ? REDACTED : redactValue(item);
  }
  return copy;
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
