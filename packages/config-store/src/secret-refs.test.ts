import { describe, expect, it } from 'vitest';
import { ConfigStoreError } from './errors.js';
import {
  credentialSchema,
  isSecretRef,
  parseSecretRef,
  resolveSecretRefs,
  secretRef,
  secretRefNames,
  secretRefSchema,
} from './secret-refs.js';

describe('secretRefSchema', () => {
  it('accepts a reference and rejects plain strings and malformed references', () => {
    expect(secretRefSchema.safeParse('${secret:OPENAI_KEY}').success).toBe(true);
    expect(secretRefSchema.safeParse('${secret:team/prod.db-token}').success).toBe(true);
    expect(secretRefSchema.safeParse('sk-123').success).toBe(false);
    expect(secretRefSchema.safeParse('${secret:}').success).toBe(false);
    expect(secretRefSchema.safeParse('${secret:A} trailing').success).toBe(false);
    expect(secretRefSchema.safeParse('${env:HOME}').success).toBe(false);
  });
});

describe('credentialSchema', () => {
  it('accepts a reference or a non-empty plain value', () => {
    expect(credentialSchema.parse('${secret:X}')).toBe('${secret:X}');
    expect(credentialSchema.parse('plain-value')).toBe('plain-value');
    expect(credentialSchema.safeParse('').success).toBe(false);
    expect(credentialSchema.safeParse(42).success).toBe(false);
  });
});

describe('isSecretRef', () => {
  it('is true only for a whole reference string', () => {
    expect(isSecretRef('${secret:X}')).toBe(true);
    expect(isSecretRef('Bearer ${secret:X}')).toBe(false);
    expect(isSecretRef(undefined)).toBe(false);
  });
});

describe('parseSecretRef', () => {
  it('returns the secret name of a reference', () => {
    expect(parseSecretRef('${secret:DB_TOKEN}')).toBe('DB_TOKEN');
    expect(parseSecretRef('DB_TOKEN')).toBeUndefined();
  });
});

describe('secretRef', () => {
  it('builds a reference and refuses names that could not be parsed back', () => {
    expect(secretRef('A_B')).toBe('${secret:A_B}');
    expect(() => secretRef('has space')).toThrow(ConfigStoreError);
  });
});

describe('resolveSecretRefs', () => {
  it('replaces whole and embedded references in a deep copy and looks each name up once', async () => {
    const config = {
      providers: { entries: { openai: { apiKey: '${secret:OPENAI}', models: ['gpt'] } } },
      storage: { url: 'libsql://db?authToken=${secret:DB}&x=${secret:DB}' },
      gateway: { tokens: [{ token: '${secret:ADMIN}', scopes: ['*'] }], port: 7420 },
    };
    const calls: string[] = [];
    const resolved = await resolveSecretRefs(config, async (name) => {
      calls.push(name);
      return `value-of-${name}`;
    });
    expect(resolved.providers.entries.openai.apiKey).toBe('value-of-OPENAI');
    expect(resolved.storage.url).toBe('libsql://db?authToken=value-of-DB&x=value-of-DB');
    expect(resolved.gateway.tokens[0]?.token).toBe('value-of-ADMIN');
    expect(resolved.gateway.port).toBe(7420);
    expect(config.providers.entries.openai.apiKey).toBe('${secret:OPENAI}');
    expect(calls.sort()).toEqual(['ADMIN', 'DB', 'OPENAI']);
  });

  it('names the missing secret and where it is used, without any secret value', async () => {
    const config = { known: '${secret:KNOWN}', channels: { telegram: { botToken: '${secret:TG_BOT}' } } };
    const error = await resolveSecretRefs(config, (name) =>
      name === 'KNOWN' ? 'super-secret-value' : undefined,
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConfigStoreError);
    const storeError = error as ConfigStoreError;
    expect(storeError.code).toBe('SECRET_MISSING');
    expect(storeError.message).toContain('TG_BOT');
    expect(storeError.data).toEqual({ name: 'TG_BOT', path: 'channels.telegram.botToken' });
    expect(JSON.stringify({ message: storeError.message, data: storeError.data })).not.toContain(
      'super-secret-value',
    );
  });
});

describe('secretRefNames', () => {
  it('finds whole and embedded references at any depth, each name once', () => {
    const config = {
      providers: { entries: { a: { apiKey: '${secret:A_KEY}' }, b: { apiKey: '${secret:A_KEY}' } } },
      storage: { url: 'libsql://db?authToken=${secret:DB_TOKEN}&x=${secret:OTHER}' },
      list: [{ deep: ['${secret:IN_ARRAY}'] }, 7, null],
      plain: 'no reference',
    };
    expect([...secretRefNames(config)].sort()).toEqual(['A_KEY', 'DB_TOKEN', 'IN_ARRAY', 'OTHER']);
    expect(secretRefNames({ port: 1 }).size).toBe(0);
  });
});
