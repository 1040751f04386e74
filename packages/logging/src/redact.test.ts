import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { captureLines, temporaryDirectory } from './internal/test-support.js';
import { createLogger } from './logger.js';
import {
  CIRCULAR,
  REDACTED,
  REDACTED_FIELDS,
  REDACTION_MAX_DEPTH,
  TRUNCATED,
  isRedactedField,
  redactUrls,
  redactValue,
} from './redact.js';
import { runWithTrace } from './trace.js';

/** Builds `{ l1: { l2: … { [field]: value } } }` with the field at key depth `depth`. */
function nest(depth: number, field: string, value: unknown): Record<string, unknown> {
  let node: Record<string, unknown> = { [field]: value, visible: `depth-${depth}` };
  for (let level = depth - 1; level >= 1; level--) node = { [`l${level}`]: node };
  return node;
}

function dig(value: unknown, depth: number): Record<string, unknown> {
  let node = value as Record<string, unknown>;
  for (let level = 1; level < depth; level++) node = node[`l${level}`] as Record<string, unknown>;
  return node;
}

const problem = { hint: 'h', errorKind: 'auth' } as const;

/** The field names of the contract (Authentication, item 8), in the contract's order. */
const CONTRACT_FIELD_NAMES = (
  'apiKey token password secret authorization accessToken refreshToken botToken privateKey ' +
  'credential credentials key passphrase connectionString accessKey cookie webhookSecret'
).split(' ');

describe('REDACTED_FIELDS', () => {
  it('lists exactly the contract field names', () => {
    expect([...REDACTED_FIELDS].sort()).toEqual(CONTRACT_FIELD_NAMES.sort());
  });
});

describe('isRedactedField', () => {
  it('matches names ignoring case and _ or - separators', () => {
    for (const name of [
      'Authorization',
      'AUTHORIZATION',
      'api_key',
      'API-KEY',
      'Access_Token',
      'PRIVATEKEY',
      'Key',
    ]) {
      expect(isRedactedField(name)).toBe(true);
    }
  });

  it('leaves names that merely contain a listed word', () => {
    for (const name of ['tokensIn', 'keyCount', 'secretary', 'passwordPolicy', 'monkey', 'cookies', 'hint']) {
      expect(isRedactedField(name)).toBe(false);
    }
  });
});

describe('redactValue', () => {
  it('redacts every listed field at each depth from 1 to 5 and beyond', () => {
    for (let depth = 1; depth <= REDACTION_MAX_DEPTH; depth++) {
      for (const field of REDACTED_FIELDS) {
        const input = nest(depth, field, 'sk-live-0123456789');
        const output = redactValue(input);
        expect(dig(output, depth)[field], `${field} at depth ${depth}`).toBe(REDACTED);
        expect(dig(output, depth).visible).toBe(`depth-${depth}`);
        expect(dig(input, depth)[field], 'input untouched').toBe('sk-live-0123456789');
      }
    }
  });

  it('replaces containers deeper than the walk limit with [Truncated]', () => {
    const output = redactValue(nest(REDACTION_MAX_DEPTH + 1, 'token', 'sk-live-x'));
    expect(dig(output, REDACTION_MAX_DEPTH)[`l${REDACTION_MAX_DEPTH}`]).toBe(TRUNCATED);
    expect(JSON.stringify(output)).not.toContain('sk-live-x');
  });

  it('replaces a whole object or array held by a listed field', () => {
    const output = redactValue({ credentials: { user: 'u', pass: 'p' }, cookie: ['a=1', 'b=2'] });
    expect(output).toEqual({ credentials: REDACTED, cookie: REDACTED });
  });

  it('walks arrays and keeps untouched values by identity', () => {
    const clean = { a: 1, list: [{ b: 2 }] };
    expect(redactValue(clean)).toBe(clean);
    const output = redactValue({ headers: [{ Authorization: 'Bearer abc' }, { accept: 'json' }], clean });
    expect(output).toEqual({ headers: [{ Authorization: REDACTED }, { accept: 'json' }], clean });
    expect((output as { clean: unknown }).clean).toBe(clean);
  });

  it('serializes nested errors and redacts their fields', () => {
    const failure = Object.assign(new Error('request failed'), {
      config: { headers: { authorization: 'Bearer eyJhbGciOi.secret' } },
      apiKey: 'sk-live-err',
    });
    const output = redactValue({ outcome: { failure } }) as { outcome: { failure: Record<string, unknown> } };
    expect(output.outcome.failure.message).toBe('request failed');
    expect(output.outcome.failure.apiKey).toBe(REDACTED);
    expect(JSON.stringify(output)).not.toContain('eyJhbGciOi');
    expect(failure.apiKey).toBe('sk-live-err');
  });

  it('marks circular references instead of looping', () => {
    const loop: Record<string, unknown> = { name: 'loop', password: 'p' };
    loop.self = loop;
    expect(redactValue(loop)).toEqual({ name: 'loop', password: REDACTED, self: CIRCULAR });
  });

  it('returns primitives unchanged and follows toJSON', () => {
    expect(redactValue('sk-live-in-a-string')).toBe('sk-live-in-a-string');
    expect(redactValue(42)).toBe(42);
    const when = new Date(0);
    expect(redactValue({ when })).toEqual({ when: when.toJSON() });
    const custom = { toJSON: () => ({ token: 't', ok: true }) };
    expect(redactValue({ custom })).toEqual({ custom: { token: REDACTED, ok: true } });
  });
});

describe('createLogger redaction', () => {
  let directory: ReturnType<typeof temporaryDirectory>;
  beforeEach(() => {
    directory = temporaryDirectory('redact');
  });
  afterEach(() => directory.remove());

  it('never writes a secret placed under any listed field at depth 1 to 5 to the log file', async () => {
    const filePath = join(directory.path, 'logs', 'agentd.log');
    const root = createLogger({ level: 'trace', destination: { filePath, maxSizeBytes: 1 << 30 } });
    const secrets: string[] = [];
    const variants = (field: string) => [
      field,
      field.toUpperCase(),
      field[0]!.toUpperCase() + field.slice(1),
    ];
    let counter = 0;
    const secret = () => {
      const value = `sk-live-${(++counter).toString(36).padStart(6, '0')}ZqX`;
      secrets.push(value);
      return value;
    };
    const logger = root.module('gateway');
    for (let depth = 1; depth <= 5; depth++) {
      for (const field of REDACTED_FIELDS) {
        for (const name of variants(field)) {
          logger.info(nest(depth, name, secret()), `info depth ${depth}`);
          logger.child(nest(depth, name, secret())).debug('child binding');
          logger.error(
            { ...problem, err: Object.assign(new Error('denied'), nest(depth, name, secret())) },
            'e',
          );
          logger.warn({ ...problem, list: [nest(depth, name, secret())] }, 'array');
          runWithTrace({ traceId: `t${depth}`, ...nest(depth, name, secret()) }, () =>
            logger.audit({}, 'ctx'),
          );
        }
      }
    }
    const bearer = `Bearer ${'eyJ'.padEnd(40, 'Q')}`;
    // In a header map only allow-listed headers keep their values (see the header test below).
    logger.info({ headers: { Authorization: bearer, 'content-type': 'text/plain' } }, 'header');
    logger.info({ req: { headers: { authorization: bearer } } }, 'request');
    await root.close();

    const raw = readFileSync(filePath, 'utf8');
    const lines = raw.trimEnd().split('\n');
    expect(lines.length).toBe(5 * REDACTED_FIELDS.length * 3 * 5 + 2);
    for (const value of secrets) expect(raw.includes(value), value).toBe(false);
    expect(raw).not.toContain('eyJQQQ');
    expect(raw.match(/sk-live-/g)).toBeNull();
    expect(raw.split(REDACTED).length - 1).toBeGreaterThanOrEqual(secrets.length + 2);
    // Non-secret data around the secrets survives.
    expect(raw).toContain('"visible":"depth-5"');
    expect(raw).toContain('"content-type":"text/plain"');
  });

  it('treats provider key headers, header maps and URL user-info as credentials', () => {
    const secret = 'sk-planted-0123456789';
    const line = redactValue({
      apiKey: secret,
      provider: {
        headers: {
          'X-Api-Key': secret,
          'api-key': secret,
          'X-Goog-Api-Key': secret,
          'x-auth-token': secret,
          'X-Custom-Tenant-Secret-Thing': secret,
          'anthropic-version': '2023-06-01',
        },
        baseUrl: `https://user:${secret}@llm.example/v1?api_key=${secret}&region=eu`,
      },
      err: { message: `fetch failed for http://bob:${secret}@10.0.0.1/v1` },
      urls: [`wss://u:${secret}@host/`],
      sessionKey: 'tenant:chat:alice',
    });
    const text = JSON.stringify(line);
    expect(text).not.toContain(secret);
    expect(text).toContain('"anthropic-version":"2023-06-01"');
    expect(text).toContain('https://[REDACTED]@llm.example/v1?api_key=[REDACTED]&region=eu');
    expect(redactUrls(`https://bob:p@ss${secret}@host/x`)).toBe('https://[REDACTED]@host/x');
    expect(redactUrls(`https://acct.blob.example/c?sv=2024&sig=${secret}&X-Amz-Signature=${secret}`)).toBe(
      'https://acct.blob.example/c?sv=2024&sig=[REDACTED]&X-Amz-Signature=[REDACTED]',
    );
    expect(text).toContain('"sessionKey":"tenant:chat:alice"');
    for (const name of [
      'X-Api-Key',
      'x-auth-token',
      'X-Goog-Api-Key',
      'clientSecret',
      'db_password',
      'Set-Cookie',
    ]) {
      expect(isRedactedField(name), name).toBe(true);
    }
    for (const name of ['sessionKey', 'cacheKey', 'maxTokens', 'tokensUsed', 'tokenId', 'visible']) {
      expect(isRedactedField(name), name).toBe(false);
    }
  });

  it('redacts a secret-named field of err, in the err serializer', () => {
    const output = captureLines();
    const root = createLogger({ destination: output });
    const failure = Object.assign(new Error('upstream said no'), { token: 'tok-123', status: 401 });
    root.error({ err: failure, ...problem }, 'call failed');
    root.error({ err: { password: 'hunter2', code: 'E' }, ...problem }, 'plain err object');
    expect(output.raw.join('')).not.toContain('tok-123');
    expect(output.raw.join('')).not.toContain('hunter2');
    expect(output.lines[0]!.err).toMatchObject({ token: REDACTED, status: 401, message: 'upstream said no' });
    expect(output.lines[1]!.err).toEqual({ password: REDACTED, code: 'E' });
    expect(failure.token).toBe('tok-123');
  });

  it('redacts top-level fields given on the call and on base', () => {
    const output = captureLines();
    const root = createLogger({ destination: output, base: { secret: 'base-secret' } });
    root.info({ apiKey: 'k-1', Token: 't-1' }, 'm');
    expect(output.lines[0]).toMatchObject({ apiKey: REDACTED, Token: REDACTED, secret: REDACTED });
  });

  it('writes deeper secrets as documented: redacted to the walk limit, truncated past it', () => {
    const output = captureLines();
    const root = createLogger({ destination: output });
    root.info(nest(9, 'token', 'deep-9'), 'nine');
    root.info(nest(REDACTION_MAX_DEPTH + 3, 'token', 'too-deep'), 'beyond');
    const raw = output.raw.join('');
    expect(raw).not.toContain('deep-9');
    expect(raw).not.toContain('too-deep');
    expect(raw).toContain(TRUNCATED);
  });
});
