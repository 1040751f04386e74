import { describe, expect, it } from 'vitest';
import { argsFingerprint, canonicalJson, digestArgs, PREVIEW_CHARS, scrubArgs, scrubText } from './digest.js';

const KEY = 'sk-live-0123456789abcdefghijklmnop';

describe('argument digest', () => {
  it('never shows credential-named fields, provider keys, bearer tokens or URL passwords', () => {
    const digest = digestArgs({
      command: `curl -H "Authorization: Bearer abcdefgh12345678" https://user:hunter2pass@example.com/x?api_key=zzz123 ${KEY}`,
      apiKey: 'plain-but-named',
      nested: { headers: { password: 'p4ssw0rd-value' }, list: ['ghp_0123456789abcdefghijABCDEFGHIJ'] },
    });
    for (const secret of [
      'abcdefgh12345678',
      'hunter2pass',
      'zzz123',
      KEY,
      'plain-but-named',
      'p4ssw0rd-value',
      'ghp_0123',
    ]) {
      expect(digest.preview).not.toContain(secret);
    }
    expect(digest.preview).toContain('curl');
    expect(digest.preview).toContain('[REDACTED]');
    expect(digest.sha256).toMatch(/^[0-9a-f]{16}$/);
  });

  it('masks long key-like runs in free text but keeps ordinary words', () => {
    expect(scrubText(`token is ${'a1B2'.repeat(10)} ok`)).toBe('token is [REDACTED] ok');
    expect(scrubText('list the files in /tmp')).toBe('list the files in /tmp');
  });

  it('cuts long strings, deep nesting, many entries and the whole preview', () => {
    const scrubbed = scrubArgs({
      s: 'x '.repeat(200),
      deep: { a: { b: { c: { d: 1 } } } },
      many: Array(30).fill(1),
    }) as Record<string, unknown>;
    expect((scrubbed.s as string).length).toBeLessThanOrEqual(121);
    expect(scrubbed.deep).toEqual({ a: { b: { c: '[Truncated]' } } });
    expect((scrubbed.many as unknown[]).at(-1)).toBe('…10 more');
    const big = digestArgs(
      Object.fromEntries(Array.from({ length: 19 }, (_, i) => [`k${i}`, 'y '.repeat(60)])),
    );
    expect(big.preview.length).toBeLessThanOrEqual(PREVIEW_CHARS + 1);
  });

  it('gives identical arguments one fingerprint whatever the key order', () => {
    expect(argsFingerprint({ a: 1, b: { c: 2, d: 3 } })).toBe(argsFingerprint({ b: { d: 3, c: 2 }, a: 1 }));
    expect(argsFingerprint({ a: 1 })).not.toBe(argsFingerprint({ a: 2 }));
    expect(canonicalJson({ b: 1, a: [2, { d: 1, c: 0 }] })).toBe('{"a":[2,{"c":0,"d":1}],"b":1}');
  });

  it('treats a __proto__ key as data, never as a prototype', () => {
    const input = JSON.parse('{"__proto__": {"polluted": true}, "x": 1}') as unknown;
    const scrubbed = scrubArgs(input) as Record<string, unknown>;
    expect(Object.getPrototypeOf(scrubbed)).toBe(Object.prototype);
    expect(Object.hasOwn(scrubbed, '__proto__')).toBe(true);
    expect(canonicalJson(input)).toBe('{"__proto__":{"polluted":true},"x":1}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
