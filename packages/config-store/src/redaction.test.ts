import { describe, expect, it } from 'vitest';
import {
  CREDENTIAL_FIELD_NAMES,
  isCredentialFieldName,
  listPlaintextCredentials,
  REDACTED,
  redactConfig,
  redactUrlCredentials,
} from './redaction.js';

describe('isCredentialFieldName', () => {
  // Every contract name, tokenHash and authToken, ignoring case; not names that merely contain one.
  it.each<[string, boolean]>([
    ...CREDENTIAL_FIELD_NAMES.map((name): [string, boolean] => [name, true]),
    ['tokenHash', true],
    ['AUTHORIZATION', true],
    ['tokens', false],
    ['keyId', false],
  ])('answers %s: %s', (name, expected) => {
    expect(isCredentialFieldName(name)).toBe(expected);
  });
});

describe('redactConfig', () => {
  it('redacts credential fields at any depth and inside arrays, keeping references and empty values', () => {
    const config = {
      providers: {
        entries: { x: { apiKey: 'sk-live', baseUrl: 'https://x' }, y: { apiKey: '${secret:Y}' } },
      },
      gateway: { tokens: [{ token: 'tok-1', scopes: ['*'] }] },
      a: { b: { c: { d: { e: { f: { password: 'deep' } } } } } },
      webhooks: { token: '', secret: null },
      mixed: { credentials: { user: 'u', pass: 'p' } },
    };
    const redacted = redactConfig(config);
    expect(redacted.providers.entries.x).toEqual({ apiKey: REDACTED, baseUrl: 'https://x' });
    expect(redacted.providers.entries.y.apiKey).toBe('${secret:Y}');
    expect(redacted.gateway.tokens[0]).toEqual({ token: REDACTED, scopes: ['*'] });
    expect(redacted.a.b.c.d.e.f.password).toBe(REDACTED);
    expect(redacted.webhooks).toEqual({ token: '', secret: null });
    expect(redacted.mixed.credentials).toBe(REDACTED);
    expect(config.gateway.tokens[0]?.token).toBe('tok-1');
  });

  it('redacts credentials inside URL strings', () => {
    const redacted = redactConfig({ storage: { url: 'libsql://db.example?authToken=jwt.value' } });
    expect(redacted.storage.url).toBe('libsql://db.example?authToken=[REDACTED]');
  });
});

describe('listPlaintextCredentials', () => {
  it('lists paths of plain credential values but not references', () => {
    const config = {
      providers: { entries: { x: { apiKey: 'sk-live' }, y: { apiKey: '${secret:Y}' } } },
      gateway: { tokens: [{ token: 'tok-1' }, { token: '${secret:T}' }] },
      other: { name: 'not a credential' },
    };
    expect(listPlaintextCredentials(config)).toEqual([
      'providers.entries.x.apiKey',
      'gateway.tokens.0.token',
    ]);
  });
});

describe('redactUrlCredentials', () => {
  it('masks user-info and credential-named query parameters only', () => {
    expect(redactUrlCredentials('libsql://u:p4ss@db.example:8080/x?authToken=abc&mode=rw')).toBe(
      'libsql://[REDACTED]@db.example:8080/x?authToken=[REDACTED]&mode=rw',
    );
    expect(redactUrlCredentials('https://api.example/v1?access_token=t0k&page=2')).toBe(
      'https://api.example/v1?access_token=[REDACTED]&page=2',
    );
    expect(redactUrlCredentials('http://127.0.0.1:7420/rpc')).toBe('http://127.0.0.1:7420/rpc');
    expect(redactUrlCredentials('no url here: key=value')).toBe('no url here: key=value');
  });
});

describe('provider credentials (issue #23)', () => {
  const secret = 'sk-planted-0123456789';
  const config = {
    providers: {
      entries: {
        p: {
          baseUrl: `https://user:${secret}@llm.example/v1`,
          headers: {
            'X-Api-Key': secret,
            'api-key': secret,
            'X-Goog-Api-Key': secret,
            'x-auth-token': secret,
            'X-Tenant-Secret-Header': secret,
            'anthropic-version': '2023-06-01',
            'X-Ref': '${secret:REF}',
          },
        },
      },
    },
  };

  it('redacts key headers, unknown header values and URL user-info in config answers', () => {
    const text = JSON.stringify(redactConfig(config));
    expect(text).not.toContain(secret);
    expect(text).toContain('"anthropic-version":"2023-06-01"');
    expect(text).toContain('"X-Ref":"${secret:REF}"');
    expect(text).toContain('https://[REDACTED]@llm.example/v1');
  });
});
