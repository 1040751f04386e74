import { describe, expect, it } from 'vitest';
import {
  CREDENTIAL_FIELD_NAMES,
  isCredentialFieldName,
  listPlaintextCredentials,
  REDACTED,
  redactConfig,
} from './redaction.js';

describe('isCredentialFieldName', () => {
  it('matches every contract name, tokenHash and authToken, ignoring case', () => {
    for (const name of CREDENTIAL_FIELD_NAMES) expect(isCredentialFieldName(name)).toBe(true);
    expect(isCredentialFieldName('tokenHash')).toBe(true);
    expect(isCredentialFieldName('AUTHORIZATION')).toBe(true);
    expect(isCredentialFieldName('tokens')).toBe(false);
    expect(isCredentialFieldName('keyId')).toBe(false);
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
