import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isWebhookError } from './errors.js';
import { createVerifier, sign, signatureHeaders, verify } from './signature.js';

// The code-hosting platform's published example for its sha256 signature header.
const KNOWN_SECRET = "It's a Secret to Everybody";
const KNOWN_BODY = 'Hello, World!';
const KNOWN_SHA256 = '757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17';

const SECRET = 'a-webhook-secret-of-at-least-32-characters';
const BODY = '{"event":"push","source":"ci","data":{}}';
const NOW_MS = 1_700_000_000_000;
const NOW_S = NOW_MS / 1000;
const fixedClock = () => NOW_MS;

describe('sign', () => {
  it('reproduces the published sha256 example', () => {
    expect(sign({ secret: KNOWN_SECRET, body: KNOWN_BODY })).toBe(KNOWN_SHA256);
    expect(sign({ secret: KNOWN_SECRET, body: Buffer.from(KNOWN_BODY) })).toBe(KNOWN_SHA256);
  });

  it('adds the algorithm prefix when asked', () => {
    expect(sign({ secret: KNOWN_SECRET, body: KNOWN_BODY, prefix: true })).toBe(`sha256=${KNOWN_SHA256}`);
  });

  it('signs with sha384 and sha512 like node:crypto does', () => {
    for (const algorithm of ['sha384', 'sha512'] as const) {
      expect(sign({ secret: SECRET, body: BODY, algorithm })).toBe(
        createHmac(algorithm, SECRET).update(BODY).digest('hex'),
      );
    }
  });

  it('refuses an empty secret with INVALID_OPTIONS', () => {
    let caught: unknown;
    try {
      sign({ secret: '', body: BODY });
    } catch (error) {
      caught = error;
    }
    expect(isWebhookError(caught, 'INVALID_OPTIONS')).toBe(true);
    expect((caught as Error).message).toContain('secret');
  });
});

describe('signatureHeaders', () => {
  it('gives the signature and the timestamp headers with the default names', () => {
    expect(
      signatureHeaders({ secret: KNOWN_SECRET, body: KNOWN_BODY, timestamp: true, now: fixedClock }),
    ).toEqual({
      'x-webhook-signature': KNOWN_SHA256,
      'x-webhook-timestamp': String(NOW_S),
    });
  });
});

describe('verify', () => {
  it('accepts the published example', () => {
    const result = verify({
      secret: KNOWN_SECRET,
      body: KNOWN_BODY,
      headers: { 'x-webhook-signature': KNOWN_SHA256 },
    });
    expect(result).toEqual({ ok: true, secretIndex: 0, timestamp: undefined });
  });

  it('accepts the published example with its sha256= prefix under the platform header name', () => {
    const result = verify({
      secret: KNOWN_SECRET,
      headerName: 'X-Hub-Signature-256',
      body: KNOWN_BODY,
      headers: { 'x-hub-signature-256': `sha256=${KNOWN_SHA256}` },
    });
    expect(result.ok).toBe(true);
  });

  it('accepts uppercase hex', () => {
    const result = verify({
      secret: KNOWN_SECRET,
      body: KNOWN_BODY,
      headers: { 'x-webhook-signature': KNOWN_SHA256.toUpperCase() },
    });
    expect(result.ok).toBe(true);
  });

  it('reads Web Headers objects as well as node:http header maps', () => {
    const headers = new Headers({ 'X-Webhook-Signature': KNOWN_SHA256 });
    expect(verify({ secret: KNOWN_SECRET, body: KNOWN_BODY, headers }).ok).toBe(true);
  });

  it('rejects a missing signature header', () => {
    expect(verify({ secret: SECRET, body: BODY, headers: {} })).toMatchObject({
      ok: false,
      reason: 'signature_missing',
      message: 'Missing signature',
    });
  });

  it('rejects a signature of the wrong length before comparing', () => {
    const good = sign({ secret: SECRET, body: BODY });
    expect(
      verify({ secret: SECRET, body: BODY, headers: { 'x-webhook-signature': good.slice(1) } }),
    ).toMatchObject({ ok: false, reason: 'length_mismatch' });
    expect(
      verify({ secret: SECRET, body: BODY, headers: { 'x-webhook-signature': `${good}00` } }),
    ).toMatchObject({ ok: false, reason: 'length_mismatch' });
  });

  it('rejects a wrong signature of the right length', () => {
    const other = sign({ secret: 'another-secret-another-secret-another', body: BODY });
    expect(verify({ secret: SECRET, body: BODY, headers: { 'x-webhook-signature': other } })).toMatchObject({
      ok: false,
      reason: 'signature_mismatch',
      message: 'Invalid signature',
    });
  });

  it('rejects a body changed after signing', () => {
    const signature = sign({ secret: SECRET, body: BODY });
    const tampered = BODY.replace('push', 'pusH');
    expect(
      verify({ secret: SECRET, body: tampered, headers: { 'x-webhook-signature': signature } }),
    ).toMatchObject({ ok: false, reason: 'signature_mismatch' });
  });

  it('rejects a prefix naming another algorithm', () => {
    const signature = sign({ secret: SECRET, body: BODY, algorithm: 'sha512' });
    expect(
      verify({ secret: SECRET, body: BODY, headers: { 'x-webhook-signature': `sha512=${signature}` } }),
    ).toMatchObject({ ok: false, reason: 'algorithm_mismatch' });
  });

  it('rejects a stale timestamp', () => {
    const headers = signatureHeaders({ secret: SECRET, body: BODY, timestamp: NOW_S - 301 });
    expect(verify({ secret: SECRET, body: BODY, headers, now: fixedClock })).toMatchObject({
      ok: false,
      reason: 'timestamp_stale',
    });
  });

  it('rejects a timestamp too far in the future', () => {
    const headers = signatureHeaders({ secret: SECRET, body: BODY, timestamp: NOW_S + 301 });
    expect(verify({ secret: SECRET, body: BODY, headers, now: fixedClock })).toMatchObject({
      ok: false,
      reason: 'timestamp_future',
    });
  });

  it('accepts a timestamp exactly maxAgeSec away on either side', () => {
    for (const timestamp of [NOW_S - 300, NOW_S + 300]) {
      const headers = signatureHeaders({ secret: SECRET, body: BODY, timestamp });
      expect(verify({ secret: SECRET, body: BODY, headers, now: fixedClock })).toEqual({
        ok: true,
        secretIndex: 0,
        timestamp,
      });
    }
  });

  it('honours a configured maxAgeSec', () => {
    const headers = signatureHeaders({ secret: SECRET, body: BODY, timestamp: NOW_S - 61 });
    expect(verify({ secret: SECRET, body: BODY, headers, now: fixedClock, maxAgeSec: 60 }).ok).toBe(false);
    expect(verify({ secret: SECRET, body: BODY, headers, now: fixedClock, maxAgeSec: 120 }).ok).toBe(true);
  });

  it('rejects a missing timestamp when one is required and accepts it otherwise', () => {
    const headers = signatureHeaders({ secret: SECRET, body: BODY });
    expect(verify({ secret: SECRET, body: BODY, headers, requireTimestamp: true })).toMatchObject({
      ok: false,
      reason: 'timestamp_missing',
    });
    expect(verify({ secret: SECRET, body: BODY, headers }).ok).toBe(true);
  });

  it('rejects a malformed timestamp', () => {
    for (const stamp of ['yesterday', '1700000000.5', '-1700000000', '2023-11-14T22:13:20Z', '1e9']) {
      const headers = { ...signatureHeaders({ secret: SECRET, body: BODY }), 'x-webhook-timestamp': stamp };
      expect(verify({ secret: SECRET, body: BODY, headers, now: fixedClock })).toMatchObject({
        ok: false,
        reason: 'timestamp_malformed',
      });
    }
  });

  it('uses configured header names', () => {
    const headers = signatureHeaders({
      secret: SECRET,
      body: BODY,
      timestamp: NOW_S - 1000,
      headerName: 'X-Sig',
      timestampHeaderName: 'X-Time',
    });
    expect(Object.keys(headers)).toEqual(['x-sig', 'x-time']);
    expect(
      verify({
        secret: SECRET,
        body: BODY,
        headers,
        headerName: 'X-Sig',
        timestampHeaderName: 'X-Time',
        now: fixedClock,
      }),
    ).toMatchObject({ ok: false, reason: 'timestamp_stale' });
  });

  it('accepts any of several secrets during a rotation and says which one matched', () => {
    const oldSecret = 'the-old-secret-the-old-secret-the-old';
    const headers = signatureHeaders({ secret: oldSecret, body: BODY });
    expect(verify({ secret: [SECRET, oldSecret], body: BODY, headers })).toMatchObject({
      ok: true,
      secretIndex: 1,
    });
    expect(verify({ secret: [SECRET], body: BODY, headers }).ok).toBe(false);
  });

  it('verifies sha512 signatures when configured', () => {
    const headers = signatureHeaders({ secret: SECRET, body: BODY, algorithm: 'sha512' });
    expect(verify({ secret: SECRET, algorithm: 'sha512', body: BODY, headers }).ok).toBe(true);
    expect(verify({ secret: SECRET, body: BODY, headers })).toMatchObject({ reason: 'length_mismatch' });
  });
});

describe('createVerifier', () => {
  it('validates options once and names the bad field', () => {
    expect(() => createVerifier({ secret: SECRET, maxAgeSec: -1 })).toThrow(/maxAgeSec/);
    expect(() => createVerifier({ secret: [] })).toThrow(/secret/);
    expect(() => createVerifier({ secret: SECRET, headerName: 'bad header' })).toThrow(/headerName/);
  });

  it('tries the extra header names when the main one is absent', () => {
    const verifier = createVerifier({ secret: SECRET, extraHeaderNames: ['X-Codehost-Signature-256'] });
    const signature = sign({ secret: SECRET, body: BODY, prefix: true });
    expect(verifier.verify(BODY, { 'x-codehost-signature-256': signature }).ok).toBe(true);
  });
});
