import { z } from 'zod';
import { ConfigStoreError } from './errors.js';
import { isPlainObject } from './internal/values.js';

const secretNamePattern = '[A-Za-z0-9_][A-Za-z0-9_.\\-/]{0,127}';
const wholeReference = new RegExp(`^\\$\\{secret:(${secretNamePattern})\\}$`);
const embeddedReference = new RegExp(`\\$\\{secret:(${secretNamePattern})\\}`, 'g');

/**
 * A reference to a named secret, `${secret:NAME}`. NAME is 1 to 128 characters
 * of letters, digits, `_`, `.`, `-` and `/`, not starting with a punctuation mark.
 * The reference itself holds no secret, so it may be stored, logged and shown.
 */
export const secretRefSchema = z
  .string()
  .regex(wholeReference, { message: 'Expected a secret reference of the form ${secret:NAME}' });

/**
 * A credential value in config: a secret reference (preferred) or a plain
 * non-empty string. Plain values are accepted so a first run works without a
 * secrets store; {@link listPlaintextCredentials} reports them for posture checks.
 */
export const credentialSchema = z.union([secretRefSchema, z.string().min(1)]);

/** True when `value` is exactly one `${secret:NAME}` reference. */
export function isSecretRef(value: unknown): value is string {
  return typeof value === 'string' && wholeReference.test(value);
}

/** The NAME inside a `${secret:NAME}` reference, or `undefined` when `value` is not one. */
export function parseSecretRef(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  return wholeReference.exec(value)?.[1];
}

/** Build the reference string for a secret name. */
export function secretRef(name: string): string {
  const reference = `\${secret:${name}}`;
  if (!wholeReference.test(reference)) {
    throw new ConfigStoreError('VALIDATION', `Invalid secret name: ${JSON.stringify(name)}`);
  }
  return reference;
}

/** Finds the value of a named secret; `undefined` means the secret does not exist. */
export type SecretLookup = (name: string) => string | undefined | Promise<string | undefined>;

/**
 * Return a deep copy of `config` with every `${secret:NAME}` replaced by the
 * secret's value, whether the reference is the whole string or embedded in
 * one (`libsql://db?authToken=${secret:DB_TOKEN}`). Each name is looked up once.
 *
 * @throws ConfigStoreError `SECRET_MISSING` naming the first unknown secret and
 * the config path that uses it (never a value).
 */
export async function resolveSecretRefs<T>(config: T, lookup: SecretLookup): Promise<T> {
  const cache = new Map<string, string>();

  const resolveName = async (name: string, path: string): Promise<string> => {
    const cached = cache.get(name);
    if (cached !== undefined) return cached;
    const value = await lookup(name);
    if (value === undefined) {
      throw new ConfigStoreError(
        'SECRET_MISSING',
        `Secret not found: ${name} (referenced at ${path || '<root>'})`,
        {
          data: { name, path },
        },
      );
    }
    cache.set(name, value);
    return value;
  };

  const visit = async (value: unknown, path: string): Promise<unknown> => {
    if (typeof value === 'string') {
      const names = [...value.matchAll(embeddedReference)].map((match) => match[1]!);
      if (names.length === 0) return value;
      for (const name of names) await resolveName(name, path);
      return value.replace(embeddedReference, (_match, name: string) => cache.get(name)!);
    }
    if (Array.isArray(value)) {
      const items: unknown[] = [];
      for (const [index, item] of value.entries()) items.push(await visit(item, join(path, String(index))));
      return items;
    }
    if (isPlainObject(value)) {
      const copy: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) copy[key] = await visit(item, join(path, key));
      return copy;
    }
    return value;
  };

  return (await visit(config, '')) as T;
}

/**
 * The names every `${secret:NAME}` in `value` refers to (whole or embedded references, at any
 * depth), each once. Reads no secret: for finding which config sections use a name.
 */
export function secretRefNames(value: unknown): Set<string> {
  const names = new Set<string>();
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item === 'string') {
      for (const match of item.matchAll(embeddedReference)) names.add(match[1]!);
    } else if (Array.isArray(item)) {
      stack.push(...item);
    } else if (isPlainObject(item)) {
      stack.push(...Object.values(item));
    }
  }
  return names;
}

function join(prefix: string, key: string): string {
  return prefix === '' ? key : `${prefix}.${key}`;
}
