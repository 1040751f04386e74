import { stdSerializers } from 'pino';

/**
 * Field names whose values never reach a log line (contract: Authentication, item 8).
 * Matching ignores case and `_`/`-` separators, so `Authorization`, `api_key`,
 * `ACCESS-TOKEN` and `Private_Key` are caught as well.
 */
export const REDACTED_FIELDS = [
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
] as const;

/** What a redacted value is replaced with. */
export const REDACTED = '[REDACTED]';

/**
 * Key depth the contract guarantees: the top level plus 4 levels of nesting, so
 * `a.b.c.d.apiKey` is the deepest contracted case. The walk goes further (see
 * {@link REDACTION_MAX_DEPTH}); this constant documents the promise.
 */
export const REDACTION_CONTRACT_DEPTH = 5;

/**
 * Deepest key level the walk inspects (top-level keys are level 1). An object or
 * array whose keys would sit deeper is written as `'[Truncated]'`, so nothing is
 * ever logged without having been checked.
 */
export const REDACTION_MAX_DEPTH = 16;

/** Replacement for containers beyond {@link REDACTION_MAX_DEPTH}. */
export const TRUNCATED = '[Truncated]';

/** Replacement for an object that contains itself. */
export const CIRCULAR = '[Circular]';

const normalizedNames = new Set(REDACTED_FIELDS.map((name) => normalizeFieldName(name)));

/**
 * Endings that make a field name a credential whatever comes before them: `X-Api-Key`,
 * `X-Goog-Api-Key`, `x-auth-token`, `clientSecret`, `dbPassword`, `Set-Cookie`. `key` alone is
 * no ending (`sessionKey`, `cacheKey` are not secrets); the key kinds that are, are listed.
 */
const CREDENTIAL_ENDINGS = [
  'apikey',
  'accesskey',
  'privatekey',
  'secretkey',
  'signingkey',
  'encryptionkey',
  'masterkey',
  'token',
  'secret',
  'password',
  'passphrase',
  'credential',
  'credentials',
  'authorization',
  'cookie',
  'connectionstring',
  'signature',
] as const;

// Field names in logs come from a small vocabulary, so a memo pays off; the cap
// stops user-controlled keys (e.g. header maps) from growing it without bound.
const verdicts = new Map<string, boolean>();
const VERDICT_CACHE_LIMIT = 4096;

function normalizeFieldName(name: string): string {
  return name.toLowerCase().replace(/[-_]/g, '');
}

/**
 * Whether a field with this name holds a credential: one of {@link REDACTED_FIELDS}, or a name
 * ending in a credential word (`X-Api-Key`, `x-auth-token`, `clientSecret`). Case, `-` and `_`
 * are ignored. This is the one policy: logs, config answers, errors and reports all use it.
 */
export function isRedactedField(name: string): boolean {
  const known = verdicts.get(name);
  if (known !== undefined) return known;
  const normalized = normalizeFieldName(name);
  const verdict =
    normalizedNames.has(normalized) || CREDENTIAL_ENDINGS.some((ending) => normalized.endsWith(ending));
  if (verdicts.size < VERDICT_CACHE_LIMIT) verdicts.set(name, verdict);
  return verdict;
}

/**
 * Request headers whose values are no credentials; in a header map (a field named `headers`)
 * every other header's value is treated as one, since providers invent their own key headers.
 */
export const PLAIN_HEADERS: ReadonlySet<string> = new Set(
  [
    'accept',
    'accept-encoding',
    'accept-language',
    'anthropic-beta',
    'anthropic-version',
    'cache-control',
    'connection',
    'content-length',
    'content-type',
    'date',
    'host',
    'http-referer',
    'openai-organization',
    'openai-project',
    'user-agent',
    'x-request-id',
    'x-title',
  ].map(normalizeFieldName),
);

/** Whether a field of this name is a header map (`headers`, `Headers`, `extra_headers`…). */
export function isHeaderMap(name: string): boolean {
  return normalizeFieldName(name).endsWith('headers');
}

/** Whether a header of this name may be shown: allow-listed in {@link PLAIN_HEADERS}. */
export function isPlainHeader(name: string): boolean {
  return PLAIN_HEADERS.has(normalizeFieldName(name));
}

// `scheme://user:pass@host` and credential-named query parameters (`?authToken=…`).
// User-info runs to the last `@` before the path: a password may itself hold an `@`.
const urlUserInfo = /\b([a-z][a-z0-9+.-]*:\/\/)[^/\s?#]*@/gi;
const urlQueryCredential = /([?&])([A-Za-z0-9._-]+)=([^&#\s"']*)/g;

/**
 * Masks the credentials a URL can carry, wherever URLs appear in `text` (a message, an error,
 * a config value): the user-info part (`https://user:pass@host`) and query parameters with a
 * credential name (`?authToken=…`, `&api_key=…`). Text without `://` is returned unchanged.
 */
export function redactUrls(text: string): string {
  if (!text.includes('://')) return text;
  return text
    .replace(urlUserInfo, `$1${REDACTED}@`)
    .replace(urlQueryCredential, (whole, lead: string, name: string) =>
      isRedactedField(name) || name.toLowerCase() === 'sig' ? `${lead}${name}=${REDACTED}` : whole,
    );
}

/** A string value as it may be logged: URL credentials masked (cheap when it holds no URL). */
function redactString(value: string): string {
  return value.includes('://') && (value.includes('@') || value.includes('=')) ? redactUrls(value) : value;
}

/** A header map with every header that is not allow-listed replaced. */
function redactHeaders(headers: Record<string, unknown>): Record<string, unknown> {
  let copy: Record<string, unknown> | undefined;
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value === undefined || value === null || value === '' || isPlainHeader(name)) continue;
    copy ??= { ...headers };
    copy[name] = REDACTED;
  }
  return copy ?? headers;
}

interface Walk {
  ancestors: object[];
}

/**
 * Returns `container` with redacted fields replaced, copying only the objects on
 * the way to a change so untouched values keep their identity (no allocation for
 * a line without secrets) and the caller's objects are never mutated.
 */
function redactContainer(container: object, level: number, walk: Walk): unknown {
  if (level > REDACTION_MAX_DEPTH) return TRUNCATED;
  if (walk.ancestors.includes(container)) return CIRCULAR;
  let source: object = container;
  let copy: Record<string | number, unknown> | unknown[] | undefined;
  if (source instanceof Error) {
    // Serialize the way pino does for `err`, so nested errors lose nothing but secrets.
    source = stdSerializers.err(source);
    copy = source as Record<string, unknown>;
  } else if (typeof (source as { toJSON?: unknown }).toJSON === 'function') {
    // JSON.stringify would write what toJSON returns; inspect exactly that.
    const json: unknown = (source as { toJSON: () => unknown }).toJSON();
    if (json === null || typeof json !== 'object') return json;
    source = json;
    copy = json as Record<string, unknown>;
  }
  walk.ancestors.push(container);
  try {
    if (Array.isArray(source)) {
      for (let index = 0; index < source.length; index++) {
        const item: unknown = source[index];
        if (item === null || (typeof item !== 'object' && typeof item !== 'string')) continue;
        const next = typeof item === 'string' ? redactString(item) : redactContainer(item, level + 1, walk);
        if (next !== item) {
          copy ??= source.slice();
          (copy as unknown[])[index] = next;
        }
      }
      return copy ?? source;
    }
    const record = source as Record<string, unknown>;
    for (const field in record) {
      if (!Object.hasOwn(record, field)) continue;
      const value = record[field];
      if (value === undefined) continue;
      if (isRedactedField(field)) {
        copy ??= { ...record };
        (copy as Record<string, unknown>)[field] = REDACTED;
        continue;
      }
      const next = redactField(field, value, level + 1, walk);
      if (next !== value) {
        copy ??= { ...record };
        (copy as Record<string, unknown>)[field] = next;
      }
    }
    return copy ?? source;
  } finally {
    walk.ancestors.pop();
  }
}

/** One field's value redacted: strings for URL credentials, header maps, containers walked. */
function redactField(field: string, value: unknown, level: number, walk: Walk): unknown {
  if (typeof value === 'string') return redactString(value);
  if (value === null || typeof value !== 'object') return value;
  const inner = redactContainer(value, level, walk);
  return isHeaderMap(field) && inner !== null && typeof inner === 'object' && !Array.isArray(inner)
    ? redactHeaders(inner as Record<string, unknown>)
    : inner;
}

/**
 * Applies the log redaction rules to any value and returns a redacted copy (the
 * input is never mutated; it is returned as is when nothing needed redacting).
 * Fields named in {@link REDACTED_FIELDS} become `'[REDACTED]'` at every depth up
 * to {@link REDACTION_MAX_DEPTH}; deeper containers become `'[Truncated]'`; `Error`
 * instances are serialized like pino's `err` serializer first. Header maps (`headers`)
 * keep only allow-listed headers' values, and URLs inside strings lose their user-info and
 * credential query parameters; other text inside strings is not scanned (a secret pasted
 * into a message is not found).
 */
export function redactValue<T>(value: T): T | unknown {
  if (value === null || typeof value !== 'object') return value;
  return redactContainer(value, 1, { ancestors: [] });
}

/**
 * Redacts the fields of a log line object. `skipField` (the `err` key) is left to
 * its serializer, which redacts after serializing, because pino serializes it
 * after formatters run.
 * @internal
 */
export function redactLine(line: Record<string, unknown>, skipField: string): Record<string, unknown> {
  let copy: Record<string, unknown> | undefined;
  const walk: Walk = { ancestors: [line] };
  for (const field in line) {
    if (!Object.hasOwn(line, field) || field === skipField) continue;
    const value = line[field];
    if (value === undefined) continue;
    if (isRedactedField(field)) {
      copy ??= { ...line };
      copy[field] = REDACTED;
      continue;
    }
    const next = redactField(field, value, 2, walk);
    if (next !== value) {
      copy ??= { ...line };
      copy[field] = next;
    }
  }
  return copy ?? line;
}

/**
 * pino's err serializer followed by redaction, for the `err` key.
 * @internal
 */
export function serializeError(err: unknown): unknown {
  const serialized: unknown = err instanceof Error ? stdSerializers.err(err) : err;
  if (serialized === null || typeof serialized !== 'object') return serialized;
  // Level 2: the err object sits at level 1, its fields one below.
  return redactContainer(serialized, 2, { ancestors: [] });
}
