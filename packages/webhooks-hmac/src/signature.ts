import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { type HeaderSource, readHeader } from './internal/headers.js';
import { parseWith } from './internal/validate.js';

/** The HMAC digests the contract allows. */
export const HMAC_ALGORITHMS = ['sha256', 'sha384', 'sha512'] as const;

/** One of {@link HMAC_ALGORITHMS}. */
export type HmacAlgorithm = (typeof HMAC_ALGORITHMS)[number];

/** Hex length of each digest, for the length check that precedes the constant-time compare. */
const HEX_LENGTH: Record<HmacAlgorithm, number> = { sha256: 64, sha384: 96, sha512: 128 };

/** The contract's defaults for HMAC verification ("HMAC verification" table). */
export const HMAC_DEFAULTS = Object.freeze({
  headerName: 'x-webhook-signature',
  algorithm: 'sha256' as HmacAlgorithm,
  timestampHeaderName: 'x-webhook-timestamp',
  maxAgeSec: 300,
  requireTimestamp: false,
});

const headerNameSchema = z
  .string()
  .min(1)
  .max(256)
  .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, { message: 'Expected an HTTP header name' })
  .transform((name) => name.toLowerCase());

/**
 * Header and freshness settings shared by {@link createVerifier} and the handler. Every
 * field has the contract's default, so `{}` is valid.
 */
export const hmacSettingsSchema = z.object({
  /** Header carrying the hex signature, optionally prefixed `<algorithm>=`. @default 'x-webhook-signature' */
  headerName: headerNameSchema.default(HMAC_DEFAULTS.headerName),
  /** Digest of the HMAC. @default 'sha256' */
  algorithm: z.enum(HMAC_ALGORITHMS).default(HMAC_DEFAULTS.algorithm),
  /** Header carrying the send time as Unix seconds. @default 'x-webhook-timestamp' */
  timestampHeaderName: headerNameSchema.default(HMAC_DEFAULTS.timestampHeaderName),
  /** Largest accepted |now − timestamp| in seconds. @default 300 */
  maxAgeSec: z.number().positive().default(HMAC_DEFAULTS.maxAgeSec),
  /** Reject requests without a timestamp header. @default false */
  requireTimestamp: z.boolean().default(HMAC_DEFAULTS.requireTimestamp),
});

/** Parsed {@link hmacSettingsSchema}. */
export type HmacSettings = z.output<typeof hmacSettingsSchema>;

const secretsSchema = z.union([
  z.string().min(1, { message: 'Secret must not be empty' }),
  z.array(z.string().min(1, { message: 'Secret must not be empty' })).min(1),
]);

/** Options of {@link createVerifier}. */
export interface VerifierOptions extends Partial<z.input<typeof hmacSettingsSchema>> {
  /**
   * The shared secret, or several during a rotation: a signature made with any of them
   * passes (put the new one first; drop the old one once senders have switched).
   */
  secret: string | readonly string[];
  /** Additional signature header names tried, in order, when `headerName` is absent. @default [] */
  extraHeaderNames?: readonly string[];
  /** Clock in milliseconds, for the timestamp check. @default Date.now */
  now?: () => number;
}

const verifierOptionsSchema = hmacSettingsSchema.extend({
  secret: secretsSchema,
  extraHeaderNames: z.array(headerNameSchema).default([]),
});

/** Why a request failed verification; every reason maps to HTTP 401. */
export type VerifyFailureReason =
  | 'signature_missing'
  | 'algorithm_mismatch'
  | 'length_mismatch'
  | 'signature_mismatch'
  | 'timestamp_missing'
  | 'timestamp_malformed'
  | 'timestamp_stale'
  | 'timestamp_future';

/** What {@link Verifier.verify} found. */
export type VerifyResult =
  | {
      ok: true;
      /** Index of the secret that matched (0 = the first, the current one during a rotation). */
      secretIndex: number;
      /** The timestamp header in Unix seconds, when one was sent. */
      timestamp: number | undefined;
    }
  | {
      ok: false;
      reason: VerifyFailureReason;
      /** A short message safe to send to the caller: it names no secret and no expected value. */
      message: string;
    };

/** A verifier with its options validated once, for use on every request. */
export interface Verifier {
  /** The validated settings. */
  readonly settings: HmacSettings;
  /** Checks the signature (and timestamp) of one request over its raw body bytes. */
  verify(body: Uint8Array | string, headers: HeaderSource): VerifyResult;
}

const FAILURE_MESSAGES: Record<VerifyFailureReason, string> = {
  signature_missing: 'Missing signature',
  algorithm_mismatch: 'Invalid signature',
  length_mismatch: 'Invalid signature',
  signature_mismatch: 'Invalid signature',
  timestamp_missing: 'Missing timestamp',
  timestamp_malformed: 'Invalid timestamp',
  timestamp_stale: 'Stale timestamp',
  timestamp_future: 'Timestamp in the future',
};

function fail(reason: VerifyFailureReason): VerifyResult {
  return { ok: false, reason, message: FAILURE_MESSAGES[reason] };
}

const PREFIXED = /^(sha256|sha384|sha512)=(.*)$/i;
// Unix seconds: digits only; 15 digits is far beyond any real clock and keeps Number exact.
const UNIX_SECONDS = /^\d{1,15}$/;

/**
 * Creates a {@link Verifier}. Steps, in the contract's order: read the signature header
 * (missing: 401), strip an `<algorithm>=` prefix (which must name the configured
 * algorithm), compute the HMAC of the raw body with each secret, reject when the lengths
 * differ, compare in constant time; then, when a timestamp header is present (or
 * required), parse it as Unix seconds and reject when |now − ts| > maxAgeSec.
 * @throws {WebhookError} `INVALID_OPTIONS` naming the offending field.
 */
export function createVerifier(options: VerifierOptions): Verifier {
  const { now = Date.now, ...rest } = options;
  const parsed = parseWith(verifierOptionsSchema, rest, 'verifier options');
  const secrets = typeof parsed.secret === 'string' ? [parsed.secret] : parsed.secret;
  const { algorithm, headerName, timestampHeaderName, maxAgeSec, requireTimestamp } = parsed;
  const headerNames = [headerName, ...parsed.extraHeaderNames.filter((name) => name !== headerName)];
  const expectedLength = HEX_LENGTH[algorithm];
  const settings: HmacSettings = { headerName, algorithm, timestampHeaderName, maxAgeSec, requireTimestamp };

  // Secrets as bytes once, rather than a string conversion inside every HMAC.
  const keys = secrets.map((secret) => Buffer.from(secret, 'utf8'));

  return {
    settings,
    verify(body, headers) {
      let raw: string | undefined;
      for (const name of headerNames) {
        raw = readHeader(headers, name);
        if (raw !== undefined) break;
      }
      if (raw === undefined) return fail('signature_missing');
      let provided = raw.trim();
      if (provided === '') return fail('signature_missing');
      // Only a value with "=" can carry an algorithm prefix; plain hex skips the pattern.
      if (provided.includes('=')) {
        const prefixed = PREFIXED.exec(provided);
        if (prefixed) {
          if (prefixed[1]?.toLowerCase() !== algorithm) return fail('algorithm_mismatch');
          provided = prefixed[2] ?? '';
        }
      }
      if (provided.length !== expectedLength) return fail('length_mismatch');
      const given = Buffer.from(provided.toLowerCase(), 'latin1');
      let matched = -1;
      for (let index = 0; index < keys.length; index++) {
        const expected = Buffer.from(hmacHex(algorithm, keys[index] as Buffer, body), 'latin1');
        // Lengths are equal here (hex of a fixed-size digest vs the checked input), as timingSafeEqual needs.
        if (given.length === expected.length && timingSafeEqual(given, expected) && matched < 0)
          matched = index;
      }
      if (matched < 0) return fail('signature_mismatch');

      const stamp = readHeader(headers, timestampHeaderName);
      const trimmed = stamp === undefined ? '' : stamp.trim();
      if (trimmed === '') {
        return requireTimestamp
          ? fail('timestamp_missing')
          : { ok: true, secretIndex: matched, timestamp: undefined };
      }
      if (!UNIX_SECONDS.test(trimmed)) return fail('timestamp_malformed');
      const seconds = Number(trimmed);
      const skew = now() / 1000 - seconds;
      if (skew > maxAgeSec) return fail('timestamp_stale');
      if (-skew > maxAgeSec) return fail('timestamp_future');
      return { ok: true, secretIndex: matched, timestamp: seconds };
    },
  };
}

/** Options of {@link verify}: a verifier's options plus the request to check. */
export interface VerifyOptions extends VerifierOptions {
  /** The raw request body, exactly as received. */
  body: Uint8Array | string;
  /** The request headers (node:http object or Web `Headers`). */
  headers: HeaderSource;
}

/**
 * One-shot verification; for many requests build a {@link createVerifier} once instead,
 * which validates the options only once.
 * @throws {WebhookError} `INVALID_OPTIONS` naming the offending field.
 */
export function verify(options: VerifyOptions): VerifyResult {
  const { body, headers, ...verifierOptions } = options;
  return createVerifier(verifierOptions).verify(body, headers);
}

const signOptionsSchema = z.object({
  secret: z.string().min(1, { message: 'Secret must not be empty' }),
  algorithm: z.enum(HMAC_ALGORITHMS).default('sha256'),
  prefix: z.boolean().default(false),
});

/** Options of {@link sign}. */
export interface SignOptions {
  /** The shared secret. */
  secret: string;
  /** The raw body bytes to sign, exactly as they will be sent. */
  body: Uint8Array | string;
  /** Digest. @default 'sha256' */
  algorithm?: HmacAlgorithm;
  /** Prefix the hex with `<algorithm>=`, as code-hosting platforms send it. @default false */
  prefix?: boolean;
}

/**
 * The lowercase hex HMAC of `body`, the value of the signature header.
 * @throws {WebhookError} `INVALID_OPTIONS` for an empty secret or an unknown algorithm.
 */
export function sign(options: SignOptions): string {
  const { body, ...rest } = options;
  const { secret, algorithm, prefix } = parseWith(signOptionsSchema, rest, 'sign options');
  const hex = hmacHex(algorithm, secret, body);
  return prefix ? `${algorithm}=${hex}` : hex;
}

/** Options of {@link signatureHeaders}. */
export interface SignatureHeadersOptions extends SignOptions {
  /** Send time in Unix seconds; `true` means now; omitted means no timestamp header. */
  timestamp?: number | true;
  /** @default 'x-webhook-signature' */
  headerName?: string;
  /** @default 'x-webhook-timestamp' */
  timestampHeaderName?: string;
  /** Clock in milliseconds, for `timestamp: true`. @default Date.now */
  now?: () => number;
}

/**
 * The headers a sender adds: the signature and, when asked, the timestamp.
 * @throws {WebhookError} `INVALID_OPTIONS` as {@link sign} does.
 */
export function signatureHeaders(options: SignatureHeadersOptions): Record<string, string> {
  const { timestamp, headerName, timestampHeaderName, now = Date.now, ...signOptions } = options;
  const headers: Record<string, string> = {
    [(headerName ?? HMAC_DEFAULTS.headerName).toLowerCase()]: sign(signOptions),
  };
  if (timestamp !== undefined) {
    const seconds = timestamp === true ? Math.floor(now() / 1000) : timestamp;
    headers[(timestampHeaderName ?? HMAC_DEFAULTS.timestampHeaderName).toLowerCase()] = String(seconds);
  }
  return headers;
}

function hmacHex(algorithm: HmacAlgorithm, secret: string | Buffer, body: Uint8Array | string): string {
  return createHmac(algorithm, secret).update(body).digest('hex');
}
