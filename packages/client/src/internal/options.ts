import { ClientError } from '../errors.js';

/*
 * Option checks written by hand rather than with zod: the client is embedded in
 * other projects, and keeping its dependency list to `ws` alone is worth the
 * few lines below.
 */

function invalid(message: string): ClientError {
  return new ClientError('INVALID_OPTIONS', message);
}

export function requireRecord(value: unknown, name: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid(`${name} must be an object`);
  }
  return value as Record<string, unknown>;
}

export function readUrl(value: unknown, name: string, protocols: readonly string[]): URL {
  if (typeof value !== 'string' && !(value instanceof URL)) throw invalid(`${name} must be a string URL`);
  let url: URL;
  try {
    url = new URL(String(value));
  } catch (error) {
    throw new ClientError('INVALID_OPTIONS', `${name} is not a valid URL`, { cause: error });
  }
  if (!protocols.includes(url.protocol)) {
    throw invalid(`${name} must use ${protocols.join(' or ')}, got ${url.protocol}`);
  }
  return url;
}

export function readOptionalString(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length === 0) throw invalid(`${name} must be a non-empty string`);
  return value;
}

/** A positive duration in milliseconds; `Infinity` means "no limit". */
export function readDuration(value: unknown, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || Number.isNaN(value) || value <= 0) {
    throw invalid(`${name} must be a positive number of milliseconds`);
  }
  return value;
}

export function readCount(value: unknown, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (
    typeof value !== 'number' ||
    !(Number.isInteger(value) || value === Number.POSITIVE_INFINITY) ||
    value < 0
  ) {
    throw invalid(`${name} must be a non-negative integer or Infinity`);
  }
  return value;
}

export function readBoolean(value: unknown, name: string, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw invalid(`${name} must be a boolean`);
  return value;
}

export function readHeaders(value: unknown, name: string): Record<string, string> {
  if (value === undefined) return {};
  const record = requireRecord(value, name);
  const headers: Record<string, string> = {};
  for (const [key, entry] of Object.entries(record)) {
    if (typeof entry !== 'string') throw invalid(`${name}.${key} must be a string`);
    headers[key] = entry;
  }
  return headers;
}

export function readFunction<T>(value: unknown, name: string, fallback: T): T {
  if (value === undefined) return fallback;
  if (typeof value !== 'function') throw invalid(`${name} must be a function`);
  return value as T;
}

export function readEnum<T extends string>(
  value: unknown,
  name: string,
  allowed: readonly T[],
  fallback: T,
): T {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !allowed.includes(value as T)) {
    throw invalid(`${name} must be one of ${allowed.join(', ')}`);
  }
  return value as T;
}

export function readLogger<T>(value: unknown, name: string, fallback: T): T {
  if (value === undefined) return fallback;
  const record = requireRecord(value, name);
  for (const level of ['debug', 'info', 'warn', 'error']) {
    if (typeof record[level] !== 'function') throw invalid(`${name}.${level} must be a function`);
  }
  return value as T;
}

/** Removes the token from a URL before it goes into a log line or an error message. */
export function redactUrl(url: URL): string {
  if (!url.searchParams.has('token')) return url.toString();
  const copy = new URL(url.toString());
  copy.searchParams.set('token', '[REDACTED]');
  return copy.toString();
} /**
 * The opening both clients' option checks share: the options record, its `url` (of one of
 * `protocols`) and the optional bearer `token`, read in that order so the first bad one is
 * the one named.
 */
export function readEndpoint(
  input: unknown,
  protocols: readonly string[],
): { options: Record<string, unknown>; url: URL; token: string | undefined } {
  const options = requireRecord(input, 'options');
  const url = readUrl(options.url, 'url', protocols);
  return { options, url, token: readOptionalString(options.token, 'token') };
}
