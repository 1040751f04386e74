import { createHash } from 'node:crypto';
import { isRedactedField, REDACTED, redactUrls } from '@agentd/logging';

/**
 * What an operator is shown of a tool call's arguments: a hash that tells two calls apart,
 * their size, and a short preview with every credential masked. The raw arguments are never
 * stored or sent.
 */
export interface ArgsDigest {
  /** First 16 hex characters of the SHA-256 of the arguments' canonical JSON. */
  sha256: string;
  /** Bytes of that canonical JSON. */
  bytes: number;
  /** The arguments as JSON, scrubbed (see {@link scrubArgs}) and cut to {@link PREVIEW_CHARS}. */
  preview: string;
}

/** Longest preview, in characters. */
export const PREVIEW_CHARS = 400;
/** Longest string value kept in a preview before it is cut. */
const STRING_CHARS = 120;
const MAX_DEPTH = 4;
const MAX_ITEMS = 20;
const TRUNCATED = '[Truncated]';

/**
 * Text that is a credential whatever field it sits in: provider keys (`sk-…`, `ghp_…`,
 * `xoxb-…`, `AKIA…`), bearer and basic credentials, JWTs, and long runs of key-like
 * characters (hex or base64 of 32 characters and more, as secrets usually are).
 */
const SECRET_TEXT = [
  /\b(?:sk|pk|rk)-[A-Za-z0-9_-]{12,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bxox[abposr]-[A-Za-z0-9-]{10,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{8,}/gi,
  /\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*/g,
  /[A-Za-z0-9+/_=-]{32,}/g,
];

/** Masks credentials inside free text (URLs with user-info or key parameters, key-like runs). */
export function scrubText(text: string): string {
  let out = redactUrls(text);
  for (const pattern of SECRET_TEXT) {
    out = out.replace(pattern, (_match, scheme?: unknown) =>
      typeof scheme === 'string' && /^(bearer|basic|token)$/i.test(scheme)
        ? `${scheme} ${REDACTED}`
        : REDACTED,
    );
  }
  return out;
}

/**
 * A copy of `value` fit to show an operator: fields named like credentials (the log redaction
 * list) become `[REDACTED]`, strings are scrubbed by {@link scrubText} and cut, containers
 * deeper than 4 levels or past 20 entries are cut. Only own keys are read.
 */
export function scrubArgs(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') {
    const scrubbed = scrubText(value);
    return scrubbed.length > STRING_CHARS ? `${scrubbed.slice(0, STRING_CHARS)}…` : scrubbed;
  }
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return TRUNCATED;
  if (Array.isArray(value)) {
    const items = value.slice(0, MAX_ITEMS).map((item) => scrubArgs(item, depth + 1));
    if (value.length > MAX_ITEMS) items.push(`…${value.length - MAX_ITEMS} more`);
    return items;
  }
  const out: Record<string, unknown> = {};
  const keys = Object.keys(value);
  for (const key of keys.slice(0, MAX_ITEMS)) {
    // A key itself may carry a credential (a map keyed by tokens): it is scrubbed like text.
    const shown = scrubText(key).slice(0, STRING_CHARS);
    Object.defineProperty(out, shown, {
      value: isRedactedField(key) ? REDACTED : scrubArgs((value as Record<string, unknown>)[key], depth + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  if (keys.length > MAX_ITEMS) out['…'] = `${keys.length - MAX_ITEMS} more keys`;
  return out;
}

/**
 * JSON with object keys sorted at every level, so the same arguments always give the same
 * text (and hash) whatever order the model wrote them in. Values JSON cannot hold become
 * `null`, as `JSON.stringify` makes them.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value, 0)) ?? 'null';
}

function sortKeys(value: unknown, depth: number): unknown {
  if (value === null || typeof value !== 'object') return value;
  // Model-made arguments are parsed JSON; past this depth the text is kept as is.
  if (depth > 64) return value;
  if (Array.isArray(value)) return value.map((item) => sortKeys(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    Object.defineProperty(out, key, {
      value: sortKeys((value as Record<string, unknown>)[key], depth + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** The full SHA-256 (hex) of the arguments' canonical JSON: identical requests share it. */
export function argsFingerprint(input: unknown): string {
  return createHash('sha256').update(canonicalJson(input)).digest('hex');
}

/** The digest an operator sees of a call's arguments. */
export function digestArgs(input: unknown): ArgsDigest {
  const canonical = canonicalJson(input);
  const preview = JSON.stringify(scrubArgs(input)) ?? 'null';
  return {
    sha256: createHash('sha256').update(canonical).digest('hex').slice(0, 16),
    bytes: Buffer.byteLength(canonical),
    preview: preview.length > PREVIEW_CHARS ? `${preview.slice(0, PREVIEW_CHARS)}…` : preview,
  };
}
