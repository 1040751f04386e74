import { execFileSync } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { chmodSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { RpcCallError } from '@agentd/client';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeOpenAi } from '../../../packages/agent-runtime/test/fake-providers.js';
import { openDatabase } from '@agentd/storage';
import { daemonPool, openAiProviders, quietRunner, rpcClient } from './helpers.js';

/** Every row of secrets.db's tables as text (ciphertexts as hex), read the way SQLite sees them. */
async function storedRows(dataDir: string): Promise<string> {
  const db = await openDatabase({ dataDir, fileName: 'secrets.db' });
  try {
    const dump: Record<string, unknown[]> = {};
    for (const table of ['secrets', 'secrets_canary']) {
      const rows = await db.query<Record<string, unknown>>(`SELECT * FROM ${table} ORDER BY rowid`);
      dump[table] = rows.map((row) =>
        Object.fromEntries(
          Object.entries(row).map(([column, value]) => [
            column,
            value instanceof ArrayBuffer || ArrayBuffer.isView(value)
              ? Buffer.from(value as Uint8Array).toString('hex')
              : value,
          ]),
        ),
      );
    }
    return JSON.stringify(dump);
  } finally {
    await db.close();
  }
}

const pool = daemonPool('agentd-secrets-');
afterEach(() => pool.cleanup());

const masterKey = () => randomBytes(32).toString('hex');

/** Every file under `dir`, raw (gzip copies unpacked), as one buffer. */
function everyFileBytes(dir: string): Buffer {
  const parts: Buffer[] = [];
  const walk = (path: string) => {
    for (const name of readdirSync(path)) {
      const child = join(path, name);
      const stat = statSync(child);
      if (stat.isDirectory()) walk(child);
      else if (stat.isFile()) {
        const bytes = readFileSync(child);
        parts.push(name.endsWith('.gz') ? gunzipSync(bytes) : bytes);
      }
    }
  };
  walk(dir);
  return Buffer.concat(parts);
}

/** The data dir's files and its config history (git objects are compressed, so git reads them). */
function expectNowhereOnDisk(dataDir: string, planted: string[]): void {
  const bytes = everyFileBytes(dataDir);
  const history = execFileSync('git', ['-C', dataDir, 'log', '-p', '--all'], { encoding: 'utf8' });
  expect(readdirSync(dataDir)).toContain('secrets.db');
  for (const value of planted) {
    expect(bytes.includes(Buffer.from(value))).toBe(false);
    expect(history).not.toContain(value);
  }
}

async function signedHook(url: string, token: string): Promise<number> {
  const body = JSON.stringify({ event: 'ping' });
  const signature = createHmac('sha256', token).update(body).digest('hex');
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-webhook-signature': signature },
    body,
  });
  await response.text();
  return response.status;
}

describe('env.set and ${secret:NAME}', () => {
  it('changes a provider key and a webhook token in process, and the values are nowhere on disk or in answers', async () => {
    const oldKey = `sk-old-${randomBytes(12).toString('hex')}`;
    const newKey = `sk-new-${randomBytes(12).toString('hex')}`;
    const oldHook = `hook-old-${randomBytes(20).toString('hex')}`;
    const newHook = `hook-new-${randomBytes(20).toString('hex')}`;
    const planted = [oldKey, newKey, oldHook, newHook];
    const fake = pool.closeAfter(await startFakeOpenAi({ apiKey: newKey }));
    const dataDir = pool.tempDir();
    const key = masterKey();
    const daemon = await pool.start(dataDir, { env: { AGENTD_MASTER_KEY: key }, agentRunner: quietRunner });
    const rpc = rpcClient(daemon.url);
    const answers: unknown[] = [];
    const call = async (method: string, params: Record<string, unknown> = {}) => {
      const result = await rpc.call(method, params);
      answers.push(result);
      return result;
    };

    expect(await call('env.set', { key: 'OAI_KEY', value: oldKey })).toEqual({
      set: true,
      key: 'OAI_KEY',
      storage: 'encrypted',
      reloaded: true,
    });
    await call('env.set', { key: 'HOOK_TOKEN', value: oldHook });
    await call('config.patch', {
      providers: openAiProviders('oai', fake.url, 'OAI_KEY', ['m']),
      agents: { entries: { gpt: { name: 'GPT', provider: 'oai' } } },
      webhooks: { enabled: true, token: '${secret:HOOK_TOKEN}', mappings: [{ id: 'x' }] },
    });

    // The provider took the old key (the fake refuses it) and the hook verifies the old token.
    const refused = await rpc.fail('agent.execute', { message: 'hi', agentId: 'gpt', sessionKey: 's1' });
    answers.push(refused.message, refused.data);
    expect(refused.message).toBe('Provider oai: credential refused (HTTP 401)');
    expect(await signedHook(`${daemon.url}/hooks/x`, oldHook)).toBe(200);

    // New values, no restart: the next turn and the next hook use them.
    expect(await call('env.set', { key: 'OAI_KEY', value: newKey })).toMatchObject({ reloaded: true });
    expect(await call('env.set', { key: 'HOOK_TOKEN', value: newHook })).toMatchObject({ reloaded: true });
    expect(await call('agent.execute', { message: 'hi', agentId: 'gpt', sessionKey: 's2' })).toMatchObject({
      finishReason: 'stop',
    });
    expect(fake.requests.at(-1)?.headers.authorization).toBe(`Bearer ${newKey}`);
    expect(await signedHook(`${daemon.url}/hooks/x`, newHook)).toBe(200);
    expect(await signedHook(`${daemon.url}/hooks/x`, oldHook)).toBe(401);

    const listed = (await call('env.list', { filter: '*_*' })) as {
      secrets: Array<Record<string, unknown>>;
      storage: string;
    };
    expect(listed.storage).toBe('encrypted');
    expect(listed.secrets.map((entry) => entry.name)).toEqual(['HOOK_TOKEN', 'OAI_KEY']);
    expect(listed.secrets[1]).toMatchObject({
      storage: 'encrypted',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      usageCount: expect.any(Number),
    });
    expect((await call('env.list', { filter: 'OAI*', limit: 1 })) as object).toMatchObject({
      secrets: [{ name: 'OAI_KEY' }],
    });

    // The config keeps the references; no config answer resolves them.
    for (const method of ['config.read', 'config.get', 'config.history', 'config.diff', 'models.list'])
      await call(method);
    await call('config.get', { section: 'providers' });
    await call('config.get', { section: 'webhooks' });
    const audit = (await call('obs.audit.query', { kind: 'secret' })) as {
      rows: Array<{ refs: Record<string, unknown> }>;
    };
    expect(audit.rows.map((row) => row.refs.name).sort()).toEqual([
      'HOOK_TOKEN',
      'HOOK_TOKEN',
      'OAI_KEY',
      'OAI_KEY',
    ]);
    const text = JSON.stringify(answers);
    for (const value of planted) expect(text).not.toContain(value);
    expect(readFileSync(join(dataDir, 'config.yaml'), 'utf8')).toContain('${secret:OAI_KEY}');

    // On disk while running (the WAL holds the latest writes) and after the stop.
    expectNowhereOnDisk(dataDir, planted);
    expect(statSync(join(dataDir, 'secrets.db')).mode & 0o777).toBe(0o600);
    await daemon.stop();
    expectNowhereOnDisk(dataDir, planted);

    // Without the master key the references are unknown: the start fails naming the key.
    const keyless = await pool.start(dataDir, { agentRunner: quietRunner }).catch((error: unknown) => error);
    expect(String((keyless as Error).message)).toMatch(
      /Secret not found: HOOK_TOKEN \(referenced at webhooks\.token\)/,
    );
    // With it, a restart reads the stored values back.
    const again = await pool.start(dataDir, { env: { AGENTD_MASTER_KEY: key }, agentRunner: quietRunner });
    expect(
      await rpcClient(again.url).call('agent.execute', { message: 'hi', agentId: 'gpt', sessionKey: 's3' }),
    ).toMatchObject({ finishReason: 'stop' });
  });

  it('validates key and value, rejects [REDACTED] and rate-limits env.set and env.list, answering no value', async () => {
    const dataDir = pool.tempDir();
    const daemon = await pool.start(dataDir, { env: { AGENTD_MASTER_KEY: masterKey() } });
    const rpc = rpcClient(daemon.url);
    const planted = `never-echoed-${randomBytes(8).toString('hex')}`;
    const refusals = [
      await rpc.fail('env.set', { key: 'lower_case', value: planted }),
      await rpc.fail('env.set', { key: `A${'B'.repeat(256)}`, value: planted }),
      await rpc.fail('env.set', { key: 'OK_NAME', value: '[REDACTED]' }),
      await rpc.fail('env.set', { key: 'OK_NAME', value: `${planted}${'x'.repeat(8192)}` }),
      await rpc.fail('env.set', { key: 'OK_NAME', value: planted, extra: 1 }),
      await rpc.fail('env.list', { limit: 501 }),
      await rpc.fail('env.list', { filter: 'A.*' }),
    ];
    expect(refusals.map((error) => error.code)).toEqual(Array(7).fill(-32602));
    expect(refusals[0]?.message).toContain('key');
    expect(refusals[2]?.message).toContain('[REDACTED]');
    expect(refusals[3]?.message).toContain('value');
    expect(JSON.stringify(refusals.map((error) => [error.message, error.data]))).not.toContain(planted);
    // Nothing was written by a refused call.
    expect(await rpc.call('env.list')).toEqual({ secrets: [], storage: 'encrypted' });

    for (let i = 0; i < 5; i++) await rpc.call('env.set', { key: `K_${i}`, value: planted });
    const limited = await rpc.fail('env.set', { key: 'K_5', value: planted });
    expect([limited.code, limited.message]).toEqual([-32000, 'env.set is limited to 5 writes per minute']);
    // env.list allowed 1 call above; 29 more fit in the minute, the next is refused.
    for (let i = 0; i < 29; i++) await rpc.call('env.list');
    const listLimited = await rpc.fail('env.list');
    expect([listLimited.code, listLimited.message]).toEqual([
      -32000,
      'env.list is limited to 30 calls per minute',
    ]);
    expect(JSON.stringify([limited, listLimited])).not.toContain(planted);
    // Refused and accepted calls alike left the value in no log, evidence or database file.
    await daemon.stop();
    expectNowhereOnDisk(dataDir, [planted]);
  });

  it('without a master key writes <data dir>/.env (0600) and says so; references resolve from it', async () => {
    const dataDir = pool.tempDir();
    const daemon = await pool.start(dataDir, { agentRunner: quietRunner });
    const rpc = rpcClient(daemon.url);
    const token = `env-file-hook-${randomBytes(20).toString('hex')}`;
    expect(await rpc.call('env.set', { key: 'HOOK_TOKEN', value: token })).toEqual({
      set: true,
      key: 'HOOK_TOKEN',
      storage: 'env-file',
      reloaded: true,
    });
    expect(statSync(join(dataDir, '.env')).mode & 0o777).toBe(0o600);
    await rpc.call('config.patch', {
      webhooks: { enabled: true, token: '${secret:HOOK_TOKEN}', mappings: [{ id: 'x' }] },
    });
    expect(await signedHook(`${daemon.url}/hooks/x`, token)).toBe(200);
    expect(await rpc.call('env.list')).toEqual({
      secrets: [{ name: 'HOOK_TOKEN', storage: 'env-file' }],
      storage: 'env-file',
    });
  });

  it('fails a config write naming the key of an unknown secret, and writes nothing', async () => {
    const dataDir = pool.tempDir();
    const daemon = await pool.start(dataDir, { env: { AGENTD_MASTER_KEY: masterKey() } });
    const rpc = rpcClient(daemon.url);
    const before = readFileSync(join(dataDir, 'config.yaml'), 'utf8');
    const error = await rpc.fail('config.patch', {
      providers: {
        entries: { x: { type: 'openai-compatible', apiKey: '${secret:NOT_SET}', models: ['m'] } },
      },
    });
    expect(error).toBeInstanceOf(RpcCallError);
    expect(error.code).toBe(-32602);
    expect(error.message).toBe(
      'Invalid params: providers.entries.x.apiKey: unknown secret NOT_SET: set it with env.set (or the environment) before referencing it',
    );
    const setError = await rpc.fail('config.set', {
      section: 'webhooks',
      key: 'token',
      value: '${secret:NOPE}',
    });
    expect(setError.message).toContain('webhooks.token: unknown secret NOPE');
    expect(readFileSync(join(dataDir, 'config.yaml'), 'utf8')).toBe(before);
  });

  it('refuses to start with another master key and leaves secrets.db intact', async () => {
    const dataDir = pool.tempDir();
    const key = masterKey();
    const first = await pool.start(dataDir, { env: { AGENTD_MASTER_KEY: key } });
    await rpcClient(first.url).call('env.set', { key: 'KEEP_ME', value: 'kept-value-0123456789' });
    await first.stop();
    const before = await storedRows(dataDir);
    expect(before).toContain('KEEP_ME');

    const refused = await pool
      .start(dataDir, { env: { AGENTD_MASTER_KEY: masterKey() } })
      .catch((error: unknown) => error);
    expect((refused as Error).message).toMatch(/master key does not open .*secrets\.db/);
    // Every stored row, ciphertexts and canary included, is as it was. (The file's bytes alone
    // are not the store: WAL frames a stopped daemon left are folded into it by any next open.)
    expect(await storedRows(dataDir)).toBe(before);

    const again = await pool.start(dataDir, { env: { AGENTD_MASTER_KEY: key } });
    expect(await rpcClient(again.url).call('env.list')).toMatchObject({ secrets: [{ name: 'KEEP_ME' }] });
  });

  it('reads the master key from secrets.masterKeyFile and refuses a file others can read', async () => {
    const dataDir = pool.tempDir();
    const keyFile = join(pool.tempDir(), 'master.key');
    writeFileSync(keyFile, `${masterKey()}\n`);
    chmodSync(keyFile, 0o644);
    const config = { secrets: { masterKeyFile: keyFile } };
    const refused = await pool.start(dataDir, { config }).catch((error: unknown) => error);
    expect((refused as Error).message).toBe(
      `The master key file ${keyFile} has mode 0644; it must be 0600 (chmod 600 ${keyFile})`,
    );
    chmodSync(keyFile, 0o600);
    const daemon = await pool.start(dataDir);
    expect(
      await rpcClient(daemon.url).call('env.set', { key: 'FROM_FILE_KEY', value: 'v-0123456789' }),
    ).toEqual({
      set: true,
      key: 'FROM_FILE_KEY',
      storage: 'encrypted',
      reloaded: true,
    });
  });
});
